package checkpoint

import (
	"errors"
	"io/fs"
	"path"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/tiny-agent/tiny-go/internal/overlay"
)

// renamed are the sources and destinations of a transaction's renamed
// directories (overlay.Rename), those inside another left out.
type renamed struct{ sources, dests []string }

func (r renamed) inSource(p string) bool      { return underAny(p, r.sources) }
func (r renamed) inDestination(p string) bool { return underAny(p, r.dests) }

func underAny(p string, dirs []string) bool {
	for _, d := range dirs {
		if p == d || strings.HasPrefix(p, d+"/") {
			return true
		}
	}
	return false
}

// renameStates records the renamed directories: before, each source as
// its mirror in orig/ holds it (hard links to the moved files, stamped
// by linkStamp); after, each destination as the tree holds it, a moved
// file named by its kept original's address (the same inode: nothing is
// read or hashed), what the command changed inside hashed.
func (s *Store) renameStates(id string, tx *overlay.Tx, changes []overlay.Change, st *txStates, before, after map[string]File) (renamed, error) {
	var rn renamed
	var renames []overlay.Change
	for _, c := range changes {
		if c.Kind == overlay.Rename && !c.Conflict {
			renames = append(renames, c)
			rn.sources = append(rn.sources, c.From)
			if st.Renamed == nil {
				st.Renamed = map[string]string{}
			}
			st.Renamed[c.Path] = c.From
		}
	}
	kept := func(rel string, _ []byte) string { return schemeTx + id + "/" + rel }
	for _, src := range rn.sources {
		if err := walkStates(tx.Orig(src), src, before, kept); err != nil {
			return rn, err
		}
		if err := walkInodes(tx.Orig(src), src, func(r string, sb *unix.Stat_t) {
			if st.Kept == nil {
				st.Kept = map[string]string{}
			}
			st.Kept[r] = linkStamp(sb)
		}); err != nil {
			return rn, err
		}
	}
	for _, c := range renames {
		if underAny(c.Path, rn.dests) {
			continue // inside another destination, walked with it
		}
		rn.dests = append(rn.dests, c.Path)
		if c.Had {
			if err := walkStates(tx.Orig(c.Path), c.Path, before, kept); err != nil {
				return rn, err
			}
			st.Bytes += dirSize(tx.Orig(c.Path))
		}
		same := map[string]string{} // a moved file: its kept original's address
		if err := walkInodes(s.Abs(c.Path), c.Path, func(r string, sb *unix.Stat_t) {
			var ob unix.Stat_t
			if from, ok := movedFrom(st.Renamed, r); ok && unix.Lstat(tx.Orig(from), &ob) == nil && ob.Dev == sb.Dev && ob.Ino == sb.Ino {
				same[r] = schemeTx + id + "/" + from
			}
		}); err != nil {
			return rn, err
		}
		hash := func(rel string, data []byte) string {
			if a, ok := same[rel]; ok {
				return a
			}
			if data == nil {
				return "" // hashFile hashes it
			}
			return sha256Hash(data)
		}
		if err := walkStates(s.Abs(c.Path), c.Path, after, hash); err != nil {
			return rn, err
		}
	}
	return rn, nil
}

// movedFrom is where the tree's path p was before the renames (a
// destination to its source) that put it there, if any did.
func movedFrom(renamed map[string]string, p string) (string, bool) {
	best := ""
	for dst := range renamed {
		if underAny(p, []string{dst}) && len(dst) > len(best) {
			best = dst
		}
	}
	if best == "" {
		return "", false
	}
	return renamed[best] + p[len(best):], true
}

// walkInodes calls f with every entry below abs that is not a directory.
func walkInodes(abs, rel string, f func(rel string, sb *unix.Stat_t)) error {
	err := filepath.WalkDir(abs, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		var sb unix.Stat_t
		if err := unix.Lstat(p, &sb); err != nil {
			return err
		}
		sub, _ := filepath.Rel(abs, p)
		f(path.Join(rel, filepath.ToSlash(sub)), &sb)
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil // moved away meanwhile
	}
	return err
}

// linkKeptChanged reports whether the kept original at the tx: address h
// is a hard link to a moved file (linkStamp) that was written in place
// since the apply (by a program outside tiny-go: a command's writes are
// copies in its upper layer), so its content is no longer the original.
func (s *Store) linkKeptChanged(h string) bool {
	id, rel, err := txAddress(h)
	if err != nil {
		return false
	}
	st, err := s.txStates(id)
	if err != nil || !strings.HasPrefix(st.Kept[rel], "link:") {
		return false
	}
	p, err := s.txBlobPath(h)
	if err != nil {
		return false
	}
	var sb unix.Stat_t
	return unix.Lstat(p, &sb) != nil || linkStamp(&sb) != st.Kept[rel]
}
