package checkpoint

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/google/uuid"

	"github.com/tiny-agent/tiny-go/internal/faultpoint"
	"github.com/tiny-agent/tiny-go/internal/overlay"
)

// Commands as transactions (docs/checkpoints.md): a bash call whose
// command runs over an overlay gets no snapshot of the tree. Its before
// record names the transaction (Record.Tx); what the command changed is
// the transaction's upper layer, applied by renames that move every
// original into <store>/tx/<id>/orig. The states a rewind needs are
// written beside it (states.json): before, the originals, addressed as
// tx:<id>/<path>; after, what the command left, hashed.

const (
	schemeTx   = "tx:"
	txDirName  = "tx"
	statesName = "states.json"
)

// txStates are the states of the paths one transaction changed.
type txStates struct {
	Before []File `json:"before"`
	After  []File `json:"after"`
	Bytes  int64  `json:"bytes,omitempty"` // the originals kept (for the cap)
	// Kept stamps each kept original (its path: device, inode, ctime and
	// size), so one replaced or rewritten after the apply is refused.
	Kept map[string]string `json:"kept,omitempty"`
	// Renamed maps each directory a command renamed to where it was: a
	// moved file's state after is its kept original at its old path.
	Renamed map[string]string `json:"renamed,omitempty"`
}

// TxRoot is the directory of the store's transactions.
func (s *Store) TxRoot() string { return filepath.Join(s.root, txDirName) }

// RecoverTx finishes what killed processes left: applies interrupted by a
// SIGKILL are rolled forward from their journals (overlay.Recover), and
// their states are written, so rewinds see them.
func (s *Store) RecoverTx() ([]string, error) {
	jids, jerr := s.recoverJournals()
	ids, err := overlay.Recover(s.TxRoot(), s.cwd)
	err = errors.Join(err, jerr)
	for _, id := range ids {
		if _, serr := s.txStates(id); serr != nil && err == nil {
			err = serr
		}
	}
	return append(ids, jids...), err
}

// Txn is one bash call's transaction.
type Txn struct {
	s  *Store
	tx *overlay.Tx // nil for a journaled one
	// jid is a journaled transaction's id (tx_journal.go): the command
	// runs on the tree, its journal in tx/<id>/journal.
	jid   string
	jlock *os.File // its pending mark, locked until its states are written
	once  sync.Once
	res   overlay.Result
	err   error
	bytes int64 // what the kept originals take in the store
	// changed are the paths the command changed (its upper layer), for
	// Recorder.Changed.
	changed []string
}

// BeginTx starts a transaction for one command.
// It is journaled when the store journals (Options.Journal, SetJournal),
// else over an overlay.
func (s *Store) BeginTx() (*Txn, error) {
	if s.journal.Load() {
		return s.BeginJournalTx()
	}
	return s.BeginOverlayTx()
}

// SetJournal says whether bash calls' transactions are journaled from now
// on (false: over an overlay).
func (s *Store) SetJournal(on bool) { s.journal.Store(on) }

// BeginOverlayTx starts a transaction whose command runs over an overlay
// of the tree (a review shows its changes before they land).
func (s *Store) BeginOverlayTx() (*Txn, error) {
	layers := ""
	if overlay.OnOverlay(s.cwd) {
		if layers = s.opts.TxLayers; layers == "" {
			return nil, errors.New("the working directory is itself an overlay, which cannot hold a command's upper layer; set TINY_OVERLAY_LAYERS to a folder on a real file system")
		}
		var err error
		if layers, err = filepath.Abs(layers); err != nil {
			return nil, err
		}
	}
	tx, err := overlay.BeginApart(s.TxRoot(), layers, s.cwd, uuid.Must(uuid.NewV7()).String())
	if err != nil {
		return nil, err
	}
	return &Txn{s: s, tx: tx}, nil
}

// ID names the transaction in the index.
func (t *Txn) ID() string {
	if t.tx == nil {
		return t.jid
	}
	return t.tx.ID
}

// Dirs are the overlay's layers: the tree, the upper and work
// directories; all "" for a journaled transaction.
func (t *Txn) Dirs() (lower, upper, work string) {
	if t.tx == nil {
		return "", "", ""
	}
	return t.s.cwd, t.tx.Upper(), t.tx.Work()
}

// Journal is, for a journaled transaction, the tree its command runs on
// and the folder of its journal; ok is false for an overlay one.
func (t *Txn) Journal() (tree, dir string, ok bool) {
	if t.tx != nil {
		return "", "", false
	}
	return t.s.cwd, filepath.Join(t.s.TxRoot(), t.jid, journalDirName), true
}

// Commit applies the command's changes to the tree (once; later calls
// return the first outcome) and records their states for rewinds. The
// paths another program changed while the command ran are not applied:
// they come back as conflicts, with where the command's version was kept.
func (t *Txn) Commit() (conflicts []string, err error) {
	if t.tx == nil {
		t.once.Do(t.commitJournal)
		return nil, t.err
	}
	t.once.Do(func() {
		changes, err := t.tx.Changes()
		if err != nil {
			t.err = fmt.Errorf("reading what the command changed: %w", err)
			return
		}
		if len(changes) == 0 {
			// Most commands change nothing: nothing to keep (a rewind
			// reads a missing transaction as one without changes).
			t.err = t.tx.Remove()
			return
		}
		for _, c := range changes {
			t.changed = append(t.changed, c.Path)
		}
		if t.res, t.err = t.tx.Apply(changes); t.err != nil {
			return
		}
		faultpoint.Hit(faultpoint.TxStates)
		st, err := t.s.txStates(t.tx.ID)
		if err != nil {
			// Every change reached the tree: only the record failed (a
			// full disk), and the next rewind plan writes it again.
			t.err = &NotRecordedError{Err: err}
			return
		}
		t.bytes = st.Bytes
		t.s.account(st.Bytes)
	})
	for _, p := range t.res.Conflicts() {
		conflicts = append(conflicts, fmt.Sprintf("%s (the command's version is in %s)", p, t.tx.Conflict(p)))
	}
	return conflicts, t.err
}

// NotRecordedError is a commit whose changes were all applied but whose
// states (what a rewind needs) could not be written yet.
type NotRecordedError struct{ Err error }

func (e *NotRecordedError) Error() string {
	return "recording them for a rewind: " + e.Err.Error()
}

func (e *NotRecordedError) Unwrap() error { return e.Err }

// ChangesApplied says every change of the command reached the tree.
func (e *NotRecordedError) ChangesApplied() bool { return true }

// Discard drops the command's changes: the tree is untouched.
func (t *Txn) Discard() error {
	var err error
	t.once.Do(func() {
		if t.tx == nil {
			err = t.discardJournal()
			return
		}
		err = t.tx.Discard()
	})
	return err
}

// txStates reads a transaction's states, computing and writing them when
// they are not there yet (an apply that a crash interrupted, finished by
// RecoverTx). A transaction that never applied anything has none.
func (s *Store) txStates(id string) (*txStates, error) {
	if !filepath.IsLocal(id) || strings.ContainsRune(id, '/') {
		return nil, fmt.Errorf("bad transaction id %q", id)
	}
	if st, ok := s.sealedStates.Load(id); ok {
		return st.(*txStates), nil
	}
	dir := filepath.Join(s.TxRoot(), id)
	if data, err := os.ReadFile(filepath.Join(dir, statesName)); err == nil {
		st, err := openStates(id, data)
		if err != nil {
			return nil, err
		}
		s.sealedStates.Store(id, st)
		return st, nil
	}
	if _, err := os.Lstat(filepath.Join(dir, journalDirName)); err == nil {
		return s.writeJournalStates(id)
	}
	tx, err := overlay.Open(s.TxRoot(), s.cwd, id)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return &txStates{}, nil // evicted, or never begun
		}
		return nil, err
	}
	changes, ok, err := tx.Journal()
	if err != nil || !ok {
		return &txStates{}, err
	}
	st, err := s.statesOf(id, tx, changes)
	if err != nil {
		return nil, err
	}
	data, err := sealStates(id, st)
	if err != nil {
		return nil, err
	}
	return st, writeAtomic(filepath.Join(dir, statesName), data, fileMode, false)
}

// statesOf lists, for every applied change, each path below it before
// (the originals in orig/) and after (the tree, hashed). Renamed
// directories are listed first (renameStates); what lies inside their
// sources and destinations is theirs.
func (s *Store) statesOf(id string, tx *overlay.Tx, changes []overlay.Change) (*txStates, error) {
	st := &txStates{}
	before, after := map[string]File{}, map[string]File{}
	kept := func(rel string, _ []byte) string { return schemeTx + id + "/" + rel }
	rn, err := s.renameStates(id, tx, changes, st, before, after)
	if err != nil {
		return nil, err
	}
	for _, c := range changes {
		if c.Conflict || c.Kind == overlay.Rename || rn.inDestination(c.Path) {
			continue
		}
		if c.Kind == overlay.Chmod {
			before[c.Path] = File{Path: c.Path, Dir: true, Mode: c.Old & 0o777}
			after[c.Path] = File{Path: c.Path, Dir: true, Mode: c.Mode & 0o777}
			continue
		}
		if c.Had && !rn.inSource(c.Path) {
			if err := walkStates(tx.Orig(c.Path), c.Path, before, kept); err != nil {
				return nil, err
			}
			st.Bytes += dirSize(tx.Orig(c.Path))
		}
		if c.Kind == overlay.Put {
			if err := walkStates(s.Abs(c.Path), c.Path, after, func(_ string, data []byte) string { return sha256Hash(data) }); err != nil {
				return nil, err
			}
		}
	}
	stampKept(st, tx, before)
	st.Before, st.After = bothSides(before, after)
	return st, nil
}

// bothSides lists two states by path, each path absent on the side
// that lacks it.
func bothSides(before, after map[string]File) (b, a []File) {
	for p, f := range before {
		b = append(b, f)
		if _, ok := after[p]; !ok {
			a = append(a, File{Path: p, Absent: true})
		}
	}
	for p, f := range after {
		a = append(a, f)
		if _, ok := before[p]; !ok {
			b = append(b, File{Path: p, Absent: true})
		}
	}
	byPath := func(x, y File) int { return strings.Compare(x.Path, y.Path) }
	slices.SortFunc(b, byPath)
	slices.SortFunc(a, byPath)
	return b, a
}

// walkStates records every entry below abs (recorded as rel) in out; hash
// names a file's content or a symlink's target. A missing abs records
// nothing (moved away meanwhile).
func walkStates(abs, rel string, out map[string]File, hash func(rel string, data []byte) string) error {
	err := filepath.WalkDir(abs, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		r := rel
		if p != abs {
			sub, _ := filepath.Rel(abs, p)
			r = path.Join(rel, filepath.ToSlash(sub))
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		f := File{Path: r, Mode: uint32(fi.Mode().Perm()), MTime: fi.ModTime().UnixNano()}
		switch {
		case fi.IsDir():
			f.Dir = true
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			f.Link, f.Hash = true, hash(r, []byte(target))
		case fi.Mode().IsRegular():
			h, err := hashFile(p, r, hash)
			if err != nil {
				return err
			}
			f.Hash = h
		case specialKind(fi.Mode()) != "":
			// Never opened: a FIFO's open waits for a writer.
			f.Special = specialKind(fi.Mode())
		default:
			f.Missing = "not a regular file, symlink or directory"
		}
		out[r] = f
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// hashFile hashes a file without reading it for a tx: address (the file
// is its own content there).
func hashFile(p, rel string, hash func(string, []byte) string) (string, error) {
	if h := hash(rel, nil); strings.HasPrefix(h, schemeTx) {
		return h, nil
	}
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	sum := sha256.New()
	if _, err := io.Copy(sum, f); err != nil {
		return "", err
	}
	return schemeSHA + hex.EncodeToString(sum.Sum(nil)), nil
}

// txBlobPath is where a tx: address's content lies.
func (s *Store) txBlobPath(h string) (string, error) {
	id, rel, err := txAddress(h)
	if err != nil {
		return "", err
	}
	return filepath.Join(s.TxRoot(), id, "orig", filepath.FromSlash(rel)), nil
}

// txView is what a transaction's record says: its states before or after.
func (p *planner) txView(rec Record) (*view, error) {
	st, err := p.s.txStates(rec.Tx)
	if err != nil {
		return nil, err
	}
	v := &view{files: map[string]File{}, tx: true}
	files := st.Before
	if rec.Phase == PhaseAfter {
		files = st.After
	}
	for _, f := range files {
		v.files[f.Path] = f
		if f.Dir {
			p.txDirs[f.Path] = true
		}
	}
	return v, nil
}

// sameTx compares two states one of which is a kept original: by content
// and by the whole mode (a transaction restores modes exactly, chmod 600
// included).
func (s *Store) sameTx(a, b File) bool {
	if a.Missing != "" || b.Missing != "" || a.Link != b.Link || a.Mode != b.Mode {
		return false
	}
	ha, err := s.contentSHA(a.Hash)
	if err != nil {
		return false
	}
	hb, err := s.contentSHA(b.Hash)
	return err == nil && ha == hb
}

// contentSHA is h as a sha256: hash, reading content where needed.
func (s *Store) contentSHA(h string) (string, error) {
	if strings.HasPrefix(h, schemeSHA) {
		return h, nil
	}
	data, err := s.readBlob(h)
	if err != nil {
		return "", err
	}
	return sha256Hash(data), nil
}

// Preview describes what the command changed so far, for a review (added,
// changed, deleted paths, with diffs); empty when it changed nothing.
func (t *Txn) Preview() ([]string, error) {
	if t.tx == nil {
		return nil, nil // its changes are in the tree already: no review
	}
	changes, err := t.tx.Changes()
	if err != nil {
		return nil, err
	}
	return t.tx.Preview(changes), nil
}

// Bytes is what the transaction's kept originals take in the store.
func (t *Txn) Bytes() int64 { return t.bytes }

// account adds a transaction's bytes to the store's size as last
// measured, so that crossing the cap evicts.
func (s *Store) account(n int64) {
	unlock, err := s.lock()
	if err != nil {
		return
	}
	defer unlock()
	s.accountLocked(n)
}

// sweepTx removes the transactions that no record from cut on names;
// those still pending (running, or not yet applied) stay.
func (s *Store) sweepTx(recs []Record, cut int64) error {
	live := map[string]bool{}
	for _, r := range recs {
		if r.At >= cut && r.Tx != "" {
			live[r.Tx] = true
		}
	}
	entries, err := os.ReadDir(s.TxRoot())
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range entries {
		id := e.Name()
		if live[id] || id == "pending" || id == "refused" || id == journalPendingDir {
			continue
		}
		if _, err := os.Lstat(filepath.Join(s.TxRoot(), "pending", id)); err == nil {
			continue
		}
		if _, err := os.Lstat(filepath.Join(s.TxRoot(), journalPendingDir, id)); err == nil {
			continue
		}
		if tx, err := overlay.Open(s.TxRoot(), s.cwd, id); err == nil {
			err = tx.Remove()
			if err != nil {
				return err
			}
		} else {
			os.RemoveAll(filepath.Join(s.TxRoot(), id))
		}
	}
	return nil
}
