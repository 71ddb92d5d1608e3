package checkpoint

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-json-experiment/json"
	"golang.org/x/sys/unix"

	"github.com/tiny-agent/tiny-go/internal/beneath"
	"github.com/tiny-agent/tiny-go/internal/overlay"
	"github.com/tiny-agent/tiny-go/internal/statekey"
)

// A transaction's states.json and its kept originals decide what a rewind
// writes: nothing of them is trusted because it is under .tiny-agent.
// states.json is sealed with tiny-go's key (package statekey), every path
// in it must lie inside the tree, and each kept original is stamped there
// (device, inode, ctime, size), so one replaced or rewritten later is
// refused instead of restored.

// StatesRefusedError is a transaction's states or kept original that
// tiny-go did not write.
type StatesRefusedError struct {
	ID, What string
	Err      error
}

func (e *StatesRefusedError) Error() string {
	return fmt.Sprintf("refused command transaction %s: %s: %v; nothing was rewound from it (rewind to a later point, or remove the transaction's folder under .tiny-agent/checkpoints/tx to drop its undo)", e.ID, e.What, e.Err)
}

func (e *StatesRefusedError) Unwrap() error { return e.Err }

func statesPurpose(id string) string { return "tx/" + id + "/" + statesName }

func sealStates(id string, st *txStates) ([]byte, error) {
	data, err := json.Marshal(st)
	if err != nil {
		return nil, err
	}
	return statekey.Seal(statesPurpose(id), data)
}

// openStates checks and decodes a transaction's states.json.
func openStates(id string, sealed []byte) (*txStates, error) {
	data, err := statekey.Open(statesPurpose(id), sealed)
	if err != nil {
		return nil, &StatesRefusedError{ID: id, What: "its states.json", Err: err}
	}
	var st txStates
	if err := json.Unmarshal(data, &st); err != nil {
		return nil, fmt.Errorf("transaction %s: %w", id, err)
	}
	for dst, src := range st.Renamed {
		if !filepath.IsLocal(dst) || !filepath.IsLocal(src) {
			return nil, &StatesRefusedError{ID: id, What: "its states.json", Err: fmt.Errorf("names a rename %q -> %q outside the tree", src, dst)}
		}
	}
	for _, f := range append(append([]File(nil), st.Before...), st.After...) {
		if err := checkStatePath(id, f, st.Renamed); err != nil {
			return nil, &StatesRefusedError{ID: id, What: "its states.json", Err: err}
		}
	}
	return &st, nil
}

// checkStatePath refuses what an apply could not have recorded: a path
// leaving the tree, or a kept original of another path (but the one a
// renamed directory moved from) or transaction.
func checkStatePath(id string, f File, renamed map[string]string) error {
	if !filepath.IsLocal(f.Path) || strings.Contains(f.Path, "\\") {
		return fmt.Errorf("names %q, outside the tree", f.Path)
	}
	if strings.HasPrefix(f.Hash, schemeTx) {
		from, moved := movedFrom(renamed, f.Path)
		if tid, rel, err := txAddress(f.Hash); err != nil || tid != id || (rel != f.Path && (!moved || rel != from)) {
			return fmt.Errorf("names %q as the original of %q", f.Hash, f.Path)
		}
	}
	return nil
}

// txAddress splits a tx: address into its transaction and path.
func txAddress(h string) (id, rel string, err error) {
	rest, ok := strings.CutPrefix(h, schemeTx)
	id, rel, ok2 := strings.Cut(rest, "/")
	if !ok || !ok2 || !filepath.IsLocal(id) || strings.ContainsRune(id, '/') || !filepath.IsLocal(rel) {
		return "", "", fmt.Errorf("not a transaction address: %q", h)
	}
	return id, rel, nil
}

// stampKept stamps the kept originals of one change.
func stampKept(st *txStates, tx *overlay.Tx, before map[string]File) {
	for p, f := range before {
		if _, done := st.Kept[p]; done || f.Dir || f.Missing != "" {
			continue
		}
		var sb unix.Stat_t
		if unix.Lstat(tx.Orig(p), &sb) != nil {
			continue // gone: reading it fails anyway
		}
		if st.Kept == nil {
			st.Kept = map[string]string{}
		}
		st.Kept[p] = stamp(&sb)
	}
}

func stamp(sb *unix.Stat_t) string {
	return fmt.Sprintf("%d:%d:%d.%09d:%d", sb.Dev, sb.Ino, sb.Ctim.Sec, sb.Ctim.Nsec, sb.Size)
}

// linkStamp stamps a kept original that is a hard link to a file a
// command renamed with its directory: by its modification time, not its
// ctime, which a later rename of the shared inode moves.
func linkStamp(sb *unix.Stat_t) string {
	return fmt.Sprintf("link:%d:%d:%d.%09d:%d", sb.Dev, sb.Ino, sb.Mtim.Sec, sb.Mtim.Nsec, sb.Size)
}

// stampMatches reports whether sb is the kept original want stamps.
func stampMatches(sb *unix.Stat_t, want string) bool {
	if strings.HasPrefix(want, "link:") {
		return linkStamp(sb) == want
	}
	return stamp(sb) == want
}

// readTxBlob is a kept original's content (a symlink's target), read
// beneath the transaction's orig/ without following a symlink, and only
// when it is still the file the apply moved there.
func (s *Store) readTxBlob(h string) ([]byte, error) {
	id, rel, err := txAddress(h)
	if err != nil {
		return nil, err
	}
	st, err := s.txStates(id)
	if err != nil {
		return nil, err
	}
	want, ok := st.Kept[rel]
	if !ok {
		return nil, &StatesRefusedError{ID: id, What: "the kept original of " + rel, Err: errors.New("has no stamp")}
	}
	root, err := beneath.Root(filepath.Join(s.TxRoot(), id, "orig"))
	if err != nil {
		return nil, fmt.Errorf("kept original %s: %w", h, err)
	}
	defer unix.Close(root)
	dir, name, err := beneath.Parent(root, rel, false)
	if err != nil {
		return nil, fmt.Errorf("kept original %s: %w", h, err)
	}
	defer unix.Close(dir)
	var sb unix.Stat_t
	if err := unix.Fstatat(dir, name, &sb, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return nil, fmt.Errorf("kept original %s: %w", h, err)
	}
	if sb.Mode&unix.S_IFMT == unix.S_IFLNK {
		if !stampMatches(&sb, want) {
			return nil, &StatesRefusedError{ID: id, What: "the kept original of " + rel, Err: errors.New("was replaced or changed after the apply")}
		}
		buf := make([]byte, unix.PathMax)
		n, err := unix.Readlinkat(dir, name, buf)
		return buf[:max(n, 0)], err
	}
	fd, err := unix.Openat(dir, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("kept original %s: %w", h, err)
	}
	f := os.NewFile(uintptr(fd), rel)
	defer f.Close()
	if err := unix.Fstat(fd, &sb); err != nil {
		return nil, err
	}
	if !stampMatches(&sb, want) {
		return nil, &StatesRefusedError{ID: id, What: "the kept original of " + rel, Err: errors.New("was replaced or changed after the apply")}
	}
	return io.ReadAll(f)
}

// splitRefused separates, in what RecoverTx returned, the transactions
// refused as forged (a line each, for the rewind's warnings: they were
// never applied, so nothing of them is to rewind) from real errors.
func splitRefused(err error) (lines []string, rest error) {
	if err == nil {
		return nil, nil
	}
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	var others []error
	for _, e := range errs {
		var r *overlay.RefusedError
		if errors.As(e, &r) {
			lines = append(lines, r.Error())
		} else {
			others = append(others, e)
		}
	}
	return lines, errors.Join(others...)
}
