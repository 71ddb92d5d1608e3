package overlay

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-json-experiment/json"
	"golang.org/x/sys/unix"

	"github.com/tiny-agent/tiny-go/internal/beneath"
	"github.com/tiny-agent/tiny-go/internal/faultpoint"
	"github.com/tiny-agent/tiny-go/internal/statekey"
)

// journal is what Apply is about to do, written before the first rename.
type journal struct {
	Tree    string   `json:"tree"`
	Changes []Change `json:"changes"`
}

// Result is what Apply did.
type Result struct {
	Changes []Change // every change, with Conflict set where it was not applied
}

// Conflicts are the paths whose command version was kept aside.
func (r Result) Conflicts() []string {
	var out []string
	for _, c := range r.Changes {
		if c.Conflict {
			out = append(out, c.Path)
		}
	}
	return out
}

// Apply brings the command's changes into the tree by renames, after
// writing them to the journal: a SIGKILL at any point leaves a journal
// that Recover rolls forward. Every step is checked against what is on
// disk, so running it again finishes it.
func (t *Tx) Apply(changes []Change) (Result, error) {
	if t.apart != "" {
		if err := t.stage(changes); err != nil {
			return Result{}, fmt.Errorf("copying what the command changed onto the tree's file system: %w", err)
		}
	}
	protectKey(t.Tree, changes)
	data, err := json.Marshal(journal{Tree: t.Tree, Changes: changes})
	if err == nil {
		data, err = statekey.Seal(t.purpose(journalName), data)
	}
	if err != nil {
		return Result{}, err
	}
	if err := writeFile(filepath.Join(t.Dir, journalName), data); err != nil {
		return Result{}, fmt.Errorf("writing the journal: %w", err)
	}
	faultpoint.Hit(faultpoint.TxJournal)
	return t.run(changes)
}

// run carries out the journal's changes; each step is skipped when done.
// Every name is resolved beneath the tree or the transaction's directory
// without following a symlink, through directory descriptors opened at
// the step (package beneath): a directory that another process swapped
// for a symlink meanwhile makes that change a conflict, never a rename
// out of the tree.
func (t *Tx) run(changes []Change) (Result, error) {
	r, err := t.openRoots()
	if err != nil {
		return Result{}, err
	}
	defer r.close()
	res := Result{Changes: make([]Change, 0, len(changes))}
	var failed []string // renames not applied: what goes inside them neither
	for _, c := range changes {
		if underConflict(c.Path, failed) {
			c.Conflict = true
		}
		if !c.Conflict {
			if err := t.step(r, c); err != nil {
				if !isConflict(err) {
					return res, fmt.Errorf("applying %s: %w", c.Path, err)
				}
				c.Conflict = true // appeared, or its directory went, meanwhile
			}
		}
		if c.Conflict && c.Kind == Rename {
			failed = append(failed, c.Path)
		}
		if c.Conflict && c.Kind == Put {
			if err := t.keepConflict(r, c.Path); err != nil {
				return res, fmt.Errorf("keeping %s aside: %w", c.Path, err)
			}
		}
		res.Changes = append(res.Changes, c)
		faultpoint.Hit(faultpoint.TxStep)
	}
	r.close()
	if err := t.removeLayers(); err != nil {
		return res, fmt.Errorf("removing the upper layer: %w", err)
	}
	faultpoint.Hit(faultpoint.TxLayers)
	t.finish()
	return res, nil
}

// roots are the directories an apply resolves beneath, open for one run.
type roots struct{ tree, dir, src int }

func (t *Tx) openRoots() (*roots, error) {
	r := &roots{tree: -1, dir: -1, src: -1}
	var err error
	if r.tree, err = beneath.Root(t.Tree); err != nil {
		return nil, err
	}
	if r.dir, err = beneath.Root(t.Dir); err != nil {
		r.close()
		return nil, err
	}
	// The source root may be gone (an apply run again after it ended):
	// every Put is then done.
	if r.src, err = beneath.Root(t.source(".")); err != nil && !errors.Is(err, fs.ErrNotExist) {
		r.close()
		return nil, err
	}
	return r, nil
}

func (r *roots) close() {
	for _, fd := range []*int{&r.tree, &r.dir, &r.src} {
		if *fd >= 0 {
			unix.Close(*fd)
			*fd = -1
		}
	}
}

func (t *Tx) step(r *roots, c Change) error {
	switch c.Kind {
	case Chmod:
		return chmodBeneath(r.tree, c.Path, c.Mode&0o7777)
	case Delete:
		return t.moveAside(r, c.Path)
	case Rename:
		return t.renameStep(r, c)
	case Put:
		if r.src < 0 {
			return nil // done
		}
		sfd, sname, err := beneath.Parent(r.src, c.Path, false)
		if errors.Is(err, fs.ErrNotExist) {
			return nil // done
		}
		if err != nil {
			return err
		}
		defer unix.Close(sfd)
		var st unix.Stat_t
		if err := unix.Fstatat(sfd, sname, &st, unix.AT_SYMLINK_NOFOLLOW); errors.Is(err, unix.ENOENT) {
			return nil // done
		}
		// After the journal: a rescan of the upper layer would read an
		// opaque directory without its mark as a merged one.
		if err := stripMarks(t.source(c.Path)); err != nil {
			return err
		}
		if c.Had {
			if err := t.moveAside(r, c.Path); err != nil {
				return err
			}
		}
		tfd, tname, err := beneath.Parent(r.tree, c.Path, false)
		if err != nil {
			return err
		}
		defer unix.Close(tfd)
		return renameat(sfd, sname, tfd, tname, true)
	}
	return fmt.Errorf("unknown change %q", c.Kind)
}

// chmodBeneath sets the mode of rel beneath root; a symlink there now is
// refused (a chmod would follow it).
func chmodBeneath(root int, rel string, mode uint32) error {
	if rel == "." {
		return unix.Fchmod(root, mode)
	}
	dfd, name, err := beneath.Parent(root, rel, false)
	if err != nil {
		return err
	}
	defer unix.Close(dfd)
	fd, err := unix.Openat(dfd, name, oPath|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT == unix.S_IFLNK {
		return fmt.Errorf("%s: %w", rel, beneath.ErrEscape)
	}
	return unix.Fchmodat(unix.AT_FDCWD, fmt.Sprintf("/proc/self/fd/%d", fd), mode, 0)
}

// moveAside moves the tree's entry at p to orig/p, unless it is there.
func (t *Tx) moveAside(r *roots, p string) error {
	ofd, oname, err := beneath.Parent(r.dir, origName+"/"+p, true)
	if err != nil {
		return err
	}
	defer unix.Close(ofd)
	var st unix.Stat_t
	if unix.Fstatat(ofd, oname, &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
		return nil
	}
	tfd, tname, err := beneath.Parent(r.tree, p, false)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // gone meanwhile: nothing to keep
	}
	if err != nil {
		return err
	}
	defer unix.Close(tfd)
	err = renameat(tfd, tname, ofd, oname, true)
	if errors.Is(err, unix.ENOENT) {
		return nil // gone meanwhile: nothing to keep
	}
	return err
}

func (t *Tx) keepConflict(r *roots, p string) error {
	if r.src < 0 {
		return nil
	}
	sfd, sname, err := beneath.Parent(r.src, p, false)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer unix.Close(sfd)
	dfd, dname, err := beneath.Parent(r.dir, conflictName+"/"+p, true)
	if err != nil {
		return err
	}
	defer unix.Close(dfd)
	err = renameat(sfd, sname, dfd, dname, false)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	return err
}

// isConflict: the tree was not as the change expects (the path appeared,
// or the directory it goes into is gone, or is a symlink now).
func isConflict(err error) bool {
	return beneath.IsNoFollow(err) || errors.Is(err, unix.EEXIST) || errors.Is(err, unix.ENOTEMPTY) || errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR)
}

// Conflict is where the command's version of a conflicting path was kept.
func (t *Tx) Conflict(p string) string {
	return filepath.Join(t.Dir, conflictName, filepath.FromSlash(p))
}

func modeBits(m uint32) fs.FileMode {
	var out fs.FileMode
	if m&unix.S_ISUID != 0 {
		out |= fs.ModeSetuid
	}
	if m&unix.S_ISGID != 0 {
		out |= fs.ModeSetgid
	}
	if m&unix.S_ISVTX != 0 {
		out |= fs.ModeSticky
	}
	return out
}

func (t *Tx) treePath(p string) string {
	if p == "." {
		return t.Tree
	}
	return filepath.Join(t.Tree, filepath.FromSlash(p))
}

func (t *Tx) upperPath(p string) string {
	return filepath.Join(t.Upper(), filepath.FromSlash(p))
}

// source is where Apply moves a Put's entry from: the upper layer, or
// its copy in staged/ when the layers are apart.
func (t *Tx) source(p string) string {
	if t.apart != "" {
		return filepath.Join(t.Dir, stagedName, filepath.FromSlash(p))
	}
	return t.upperPath(p)
}

// Journal reads the changes Apply wrote; ok is false when it never wrote
// them (the command changed nothing that was applied).
func (t *Tx) Journal() (changes []Change, ok bool, err error) {
	data, err := os.ReadFile(filepath.Join(t.Dir, journalName))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	if data, err = statekey.Open(t.purpose(journalName), data); err != nil {
		return nil, false, &RefusedError{ID: t.ID, What: "its journal", Err: err}
	}
	j, err := parseJournal(data)
	if err != nil {
		return nil, false, fmt.Errorf("transaction %s: %w", t.ID, err)
	}
	return j.Changes, true, nil
}

// parseJournal decodes a journal, refusing what Apply could not have
// written (a path leaving the tree, or tiny-go's own state renamed).
func parseJournal(data []byte) (journal, error) {
	var j journal
	if err := json.Unmarshal(data, &j); err != nil {
		return j, fmt.Errorf("journal: %w", err)
	}
	for _, c := range j.Changes {
		if c.Path == "" || (c.Path != "." && !filepath.IsLocal(c.Path)) {
			return j, fmt.Errorf("journal: bad path %q", c.Path)
		}
		if c.From != "" && (!filepath.IsLocal(c.From) || within(c.From, StateDirName)) {
			return j, fmt.Errorf("journal: bad path %q", c.From)
		}
	}
	return j, nil
}

// writeFile writes data to path through a temporary file and a rename, so
// a reader finds all of it or none.
func writeFile(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// protectKey makes a conflict of every change to tiny-go's key folder, or
// to a directory above it, when that lies inside the tree (tiny-go run in
// the home directory): a command's version of it is kept aside, never
// applied, so no command can replace the key that seals tiny-go's state.
func protectKey(tree string, changes []Change) {
	dir, err := statekey.Dir()
	if err != nil {
		return
	}
	rel, err := filepath.Rel(tree, dir)
	if err != nil || !filepath.IsLocal(rel) {
		return
	}
	rel = filepath.ToSlash(rel)
	for i, c := range changes {
		if c.Kind == Chmod {
			continue // a mode of a directory above it: harmless
		}
		if c.Path == "." || c.Path == rel || strings.HasPrefix(rel, c.Path+"/") || strings.HasPrefix(c.Path, rel+"/") {
			changes[i].Conflict = true
		}
	}
}
