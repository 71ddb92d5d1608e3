package overlay

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/go-json-experiment/json"
	"golang.org/x/sys/unix"
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
	data, err := json.Marshal(journal{Tree: t.Tree, Changes: changes})
	if err != nil {
		return Result{}, err
	}
	if err := writeFile(filepath.Join(t.Dir, journalName), data); err != nil {
		return Result{}, fmt.Errorf("writing the journal: %w", err)
	}
	return t.run(changes)
}

// run carries out the journal's changes; each step is skipped when done.
func (t *Tx) run(changes []Change) (Result, error) {
	res := Result{Changes: make([]Change, 0, len(changes))}
	for _, c := range changes {
		if !c.Conflict {
			if err := t.step(c); err != nil {
				if !isConflict(err) {
					return res, fmt.Errorf("applying %s: %w", c.Path, err)
				}
				c.Conflict = true // appeared, or its directory went, meanwhile
			}
		}
		if c.Conflict && c.Kind == Put {
			if err := t.keepConflict(c.Path); err != nil {
				return res, fmt.Errorf("keeping %s aside: %w", c.Path, err)
			}
		}
		res.Changes = append(res.Changes, c)
	}
	if err := t.removeLayers(); err != nil {
		return res, fmt.Errorf("removing the upper layer: %w", err)
	}
	t.finish()
	return res, nil
}

func (t *Tx) step(c Change) error {
	switch c.Kind {
	case Chmod:
		return os.Chmod(t.treePath(c.Path), fs.FileMode(c.Mode&0o777)|modeBits(c.Mode))
	case Delete:
		return t.moveAside(c.Path)
	case Put:
		up := t.source(c.Path)
		if _, err := os.Lstat(up); errors.Is(err, fs.ErrNotExist) {
			return nil // done
		}
		// After the journal: a rescan of the upper layer would read an
		// opaque directory without its mark as a merged one.
		if err := stripMarks(up); err != nil {
			return err
		}
		if c.Had {
			if err := t.moveAside(c.Path); err != nil {
				return err
			}
		}
		return renameNoReplace(up, t.treePath(c.Path))
	}
	return fmt.Errorf("unknown change %q", c.Kind)
}

// moveAside moves the tree's entry at p to orig/p, unless it is there.
func (t *Tx) moveAside(p string) error {
	dst := t.Orig(p)
	if _, err := os.Lstat(dst); err == nil {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return err
	}
	err := os.Rename(t.treePath(p), dst)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // gone meanwhile: nothing to keep
	}
	return err
}

func (t *Tx) keepConflict(p string) error {
	up := t.source(p)
	if _, err := os.Lstat(up); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	dst := filepath.Join(t.Dir, conflictName, filepath.FromSlash(p))
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return err
	}
	return os.Rename(up, dst)
}

// isConflict: the tree was not as the change expects (the path appeared,
// or the directory it goes into is gone).
func isConflict(err error) bool {
	return errors.Is(err, unix.EEXIST) || errors.Is(err, unix.ENOTEMPTY) || errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR)
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
	j, err := parseJournal(data)
	if err != nil {
		return nil, false, fmt.Errorf("transaction %s: %w", t.ID, err)
	}
	return j.Changes, true, nil
}

// parseJournal decodes a journal, refusing what Apply could not have
// written (a path leaving the tree).
func parseJournal(data []byte) (journal, error) {
	var j journal
	if err := json.Unmarshal(data, &j); err != nil {
		return j, fmt.Errorf("journal: %w", err)
	}
	for _, c := range j.Changes {
		if c.Path == "" || (c.Path != "." && !filepath.IsLocal(c.Path)) {
			return j, fmt.Errorf("journal: bad path %q", c.Path)
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
