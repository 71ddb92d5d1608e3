// Applying a rewind plan: putting content back in an order that is safe to
// interrupt, and the summary shown before it runs.

package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/tiny-agent/tiny-go/internal/faultpoint"
)

// Summary is what a rewind did (or, for a plan, will do).
type Summary struct {
	Restored []string `json:"restored,omitempty"`
	Created  []string `json:"created,omitempty"`
	Deleted  []string `json:"deleted,omitempty"`
	Skipped  []Skip   `json:"skipped,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
}

// Preview is the summary of a plan before it runs.
func (p *Plan) Preview() Summary {
	var s Summary
	for _, a := range p.Actions {
		s.add(a)
	}
	for _, a := range p.Git {
		switch {
		case a.From == "":
			s.Created = append(s.Created, a.label())
		case a.To == "":
			s.Deleted = append(s.Deleted, a.label())
		default:
			s.Restored = append(s.Restored, a.label())
		}
	}
	s.Skipped = append(s.Skipped, p.Skipped...)
	s.Warnings = append(s.Warnings, p.Warnings...)
	return s
}

func (s *Summary) add(a Action) {
	switch a.Op {
	case OpCreate:
		s.Created = append(s.Created, a.Path)
	case OpDelete:
		s.Deleted = append(s.Deleted, a.Path)
	default:
		s.Restored = append(s.Restored, a.Path)
	}
}

// Empty reports whether nothing is or was to be done or reported.
func (s Summary) Empty() bool {
	return len(s.Restored)+len(s.Created)+len(s.Deleted)+len(s.Skipped)+len(s.Warnings) == 0
}

// Apply carries out a plan, file by file: each file is written to a
// temporary file beside it and renamed over it, so a crash leaves every
// file either as it was or as it is to be. A path that is already in its
// target state counts as done, which makes Apply safe to run again after
// an interruption; a path that is in neither its planned state nor its
// target is skipped unless force.
func (s *Store) Apply(ctx context.Context, plan *Plan, force bool) (Summary, []Action, error) {
	var sum Summary
	var done []Action
	s.removeStaleTemps(plan.Actions)
	for _, a := range applyOrder(plan.Actions) {
		if err := ctx.Err(); err != nil {
			return sum, done, err
		}
		skip, err := s.applyOne(a, force)
		if err != nil {
			return sum, done, err
		}
		if skip != "" {
			sum.Skipped = append(sum.Skipped, Skip{a.Path, skip})
			continue
		}
		sum.add(a)
		done = append(done, a)
		if s.opts.AfterApply != nil {
			s.opts.AfterApply(len(done))
		}
	}
	s.pruneEmptied(done)
	dirTimes(s, done)
	if err := s.applyGit(ctx, plan, force, &sum, len(done)); err != nil {
		return sum, done, err
	}
	sum.Skipped = append(sum.Skipped, plan.Skipped...)
	sum.Warnings = append(sum.Warnings, plan.Warnings...)
	return sum, done, nil
}

// applyOne puts one path back, unless it changed since the plan (the
// reason it is skipped, "" when put back or already so).
func (s *Store) applyOne(a Action, force bool) (string, error) {
	if len(a.Patches) > 0 {
		faultpoint.Hit(faultpoint.RewindPut)
		ok, err := s.applyPatches(a)
		if err != nil {
			return "", fmt.Errorf("rewind %s: %w", a.Path, err)
		}
		if !ok {
			return "replaced while the rewind was interrupted", nil
		}
		return "", nil
	}
	cur, data, err := s.stat(a.Path)
	if err != nil {
		return "", err
	}
	if !cur.Absent && !cur.Dir && cur.Missing == "" {
		cur.Hash = s.hashLike(a.To.Hash, data)
	}
	faultpoint.Hit(faultpoint.RewindPut)
	switch {
	case s.same(cur, a.To):
	case s.sameAsPlanned(cur, a.From, data) || force:
		if err := s.put(a); err != nil {
			return "", fmt.Errorf("rewind %s: %w", a.Path, err)
		}
	default:
		return "changed while the rewind was interrupted (--force overwrites)", nil
	}
	return "", nil
}

// pruneEmptied removes the directories inside the working directory that
// deleting files left empty (a mkdir -p of the rewound turn): they held no
// file before, or the rewind would have put one back.
func (s *Store) pruneEmptied(done []Action) {
	for _, a := range done {
		if a.Op != OpDelete || a.KeepDirs || filepath.IsAbs(a.Path) {
			continue
		}
		for dir := path.Dir(a.Path); dir != "." && dir != "/"; dir = path.Dir(dir) {
			if s.removeEmptyBeneath(dir) != nil {
				break // not empty (or gone already, or not a directory)
			}
		}
	}
}

func (s *Store) sameAsPlanned(cur, from File, data []byte) bool {
	if cur.Absent || from.Absent {
		return cur.Absent == from.Absent
	}
	if cur.Missing != "" {
		return false
	}
	if !cur.Dir {
		cur.Hash = sha256Hash(data)
	}
	return s.same(cur, from)
}

// put makes one path what the action says. A path inside the working
// directory is resolved beneath it without following symlinks
// (putBeneath); one outside it (a write outside the tree) by its path.
func (s *Store) put(a Action) error {
	if !filepath.IsAbs(a.Path) {
		return s.putBeneath(a)
	}
	abs := s.Abs(a.Path)
	if a.To.Absent {
		err := os.Remove(abs)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	if a.To.Dir {
		return putDir(abs, a.To.Mode)
	}
	if a.To.Special != "" {
		return putSpecial(abs, a.To)
	}
	data, err := s.readBlob(a.To.Hash)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		return err
	}
	if fi, err := os.Lstat(abs); err == nil && fi.IsDir() {
		// A directory now stands where the file was: only an empty one
		// is replaced.
		if err := os.Remove(abs); err != nil {
			return fmt.Errorf("a directory is in the way: %w", err)
		}
	}
	if a.To.Link {
		tmp := filepath.Join(filepath.Dir(abs), "."+filepath.Base(abs)+".tiny-tmp-link")
		os.Remove(tmp)
		if err := os.Symlink(string(data), tmp); err != nil {
			return err
		}
		if err := setMTime(tmp, a.To.MTime); err != nil {
			return err
		}
		return os.Rename(tmp, abs)
	}
	mode := fs.FileMode(a.To.Mode).Perm()
	if mode == 0 {
		mode = 0o644
	}
	if err := writeAtomic(abs, data, mode, false); err != nil {
		return err
	}
	return setMTime(abs, a.To.MTime)
}

// dirTimes gives the directories the rewind made back their modification
// times, deepest first, once nothing more is put inside them.
func dirTimes(s *Store, done []Action) {
	for i := len(done) - 1; i >= 0; i-- {
		a := done[i]
		if !a.To.Dir || a.To.MTime == 0 {
			continue
		}
		// Best effort: the tree is right without it.
		if filepath.IsAbs(a.Path) {
			_ = setMTime(a.Path, a.To.MTime)
		} else {
			_ = s.dirTimesBeneath(a.Path, a.To.MTime)
		}
	}
}

// putSpecial makes abs the FIFO or socket f (mknod makes a socket's inode
// without binding it), through a temporary name and a rename; what stands
// there instead goes first (a directory only when empty).
func putSpecial(abs string, f File) error {
	typ := uint32(unix.S_IFIFO)
	if f.Special == "socket" {
		typ = unix.S_IFSOCK
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		return err
	}
	if fi, err := os.Lstat(abs); err == nil && fi.IsDir() {
		if err := os.Remove(abs); err != nil {
			return fmt.Errorf("a directory is in the way: %w", err)
		}
	}
	tmp := filepath.Join(filepath.Dir(abs), "."+filepath.Base(abs)+".tiny-tmp-node")
	os.Remove(tmp)
	if err := unix.Mknod(tmp, typ|(f.Mode&0o777), 0); err != nil {
		return fmt.Errorf("mknod: %w", err)
	}
	if err := os.Chmod(tmp, fs.FileMode(f.Mode).Perm()); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := setMTime(tmp, f.MTime); err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, abs)
}

// setMTime gives p back its recorded modification time (its access time
// too: the rewind is not a read). 0: none was recorded.
func setMTime(p string, ns int64) error {
	if ns == 0 {
		return nil
	}
	ts := unix.NsecToTimespec(ns)
	return unix.UtimesNanoAt(unix.AT_FDCWD, p, []unix.Timespec{ts, ts}, unix.AT_SYMLINK_NOFOLLOW)
}

// RewindRecords are the records of a rewind that changed done, to append
// to the session's index: the rewind is then an effect like any other, so
// a later rewind can undo it (and tells the user's later edits from it).
func RewindRecords(id string, done []Action, atMillis int64) []Record {
	if len(done) == 0 {
		return nil
	}
	b := Record{Rewind: id, Phase: PhaseBefore, At: atMillis}
	a := Record{Rewind: id, Phase: PhaseAfter, At: atMillis}
	for _, x := range done {
		b.Files = append(b.Files, x.From)
		a.Files = append(a.Files, x.To)
	}
	return []Record{b, a}
}

// removeStaleTemps removes the temporary files that an interrupted Apply
// left beside the files it was putting back. Directories of the tree are
// opened beneath it without following symlinks (removeTempsBeneath).
func (s *Store) removeStaleTemps(actions []Action) {
	bases := map[string]map[string]bool{} // dir -> base names
	for _, a := range actions {
		dir, base := path.Split(a.Path)
		if filepath.IsAbs(a.Path) {
			dir, base = filepath.Split(a.Path)
		}
		if bases[dir] == nil {
			bases[dir] = map[string]bool{}
		}
		bases[dir][base] = true
	}
	for dir, names := range bases {
		if !filepath.IsAbs(dir) {
			s.removeTempsBeneath(dir, names)
			continue
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range entries {
			if isStaleTemp(e.Name(), names) {
				os.Remove(filepath.Join(dir, e.Name()))
			}
		}
	}
}

// isStaleTemp: n is ".<name>.tiny-tmp-*" for one of names.
func isStaleTemp(n string, names map[string]bool) bool {
	i := strings.LastIndex(n, ".tiny-tmp-")
	return i > 1 && n[0] == '.' && names[n[1:i]]
}

// applyOrder is the order a rewind puts paths back in: deletions first,
// deepest first (a directory the turn made is emptied before it goes, and
// a file can come back where it stood), then the rest, parents first.
func applyOrder(actions []Action) []Action {
	out := make([]Action, 0, len(actions))
	for i := len(actions) - 1; i >= 0; i-- {
		if actions[i].Op == OpDelete {
			out = append(out, actions[i])
		}
	}
	for _, a := range actions {
		if a.Op != OpDelete {
			out = append(out, a)
		}
	}
	return out
}

// putDir makes abs a directory with mode: what stands there instead (a
// file or symlink) goes first.
func putDir(abs string, mode uint32) error {
	if fi, err := os.Lstat(abs); err == nil && !fi.IsDir() {
		if err := os.Remove(abs); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return err
	}
	return os.Chmod(abs, fs.FileMode(mode).Perm())
}
