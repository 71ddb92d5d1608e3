package overlay

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// Renamed directories. Mounted with redirect_dir=on, the kernel renames a
// directory of the tree by copying up the directory alone (not what is
// in it) under its new name, marked overlay.redirect with where it was
// (a name in its parent's directory of the tree, or a path from the
// tree's root when it moved to another parent), and whites out the old
// name. Apply makes that a rename of the tree's directory (same inode,
// no copy), then applies the upper layer's changes inside it.
//
// What a rename moves must still be kept for a rewind: before the rename,
// orig/<source> gets a mirror of the source whose files are hard links
// to the moved ones (no data copied). The cases a plain rename of one
// directory cannot carry (a source inside another renamed source, a
// destination on another's source, a source another program changed
// meanwhile, a renamed directory inside one the command made) are copied
// into the upper layer instead (materialize), as without redirect_dir.

// redirectOf is the overlay.redirect mark of the upper layer's directory
// up ("" when it has none).
func redirectOf(up string) string {
	for _, pre := range xattrPrefixes {
		buf := make([]byte, unix.PathMax)
		n, err := unix.Lgetxattr(up, pre+"redirect", buf)
		if err == nil && n > 0 {
			return string(buf[:n])
		}
	}
	return ""
}

// redirectSource is the tree's path a redirect names: relative ones are a
// name in the directory of the tree that parent (a tree path) stands for.
func redirectSource(redirect, parent string) (string, error) {
	var src string
	if abs, ok := strings.CutPrefix(redirect, "/"); ok {
		src = path.Clean(abs)
	} else if !strings.Contains(redirect, "/") {
		src = path.Join(parent, redirect)
	}
	if src == "" || src == "." || !filepath.IsLocal(src) || src == StateDirName || strings.HasPrefix(src, StateDirName+"/") {
		return "", fmt.Errorf("overlay redirect %q: not a directory of the working directory", redirect)
	}
	return src, nil
}

// scanRenamed appends the Rename of c.Path (the upper layer's directory
// up, marked with a redirect) and the changes inside it. lower is the
// tree's path Path stood for before the rename (the entry it replaces).
func (t *Tx) scanRenamed(c Change, up string, ust *unix.Stat_t, lower string, out *[]Change) error {
	src, err := redirectSource(redirectOf(up), path.Dir(lower))
	if err != nil {
		return err
	}
	var sst unix.Stat_t
	if err := unix.Lstat(t.treePath(src), &sst); err != nil || !isDir(&sst) {
		// Another program removed the source meanwhile: what the command
		// made of it is kept aside, as a conflict.
		c.Kind, c.Conflict = Put, true
		*out = append(*out, c)
		return nil
	}
	c.Kind, c.From, c.Ino = Rename, src, sst.Ino
	// A source another program changed while the command ran: copied in,
	// so a Put's conflict keeps the command's version aside.
	c.Conflict = t.changedSince(&sst)
	*out = append(*out, c)
	if ust.Mode&0o7777 != sst.Mode&0o7777 {
		*out = append(*out, Change{Path: c.Path, Kind: Chmod, Had: true, Mode: uint32(ust.Mode & 0o7777), Old: uint32(sst.Mode & 0o7777), From: src})
	}
	return t.scan(c.Path, src, out)
}

// settle copies into the upper layer the renamed directories a rename
// cannot carry; again says the upper layer changed (scan it again).
func (t *Tx) settle(changes []Change) (again bool, err error) {
	var renames []Change
	for _, c := range changes {
		if c.Kind == Rename {
			renames = append(renames, c)
		}
	}
	for _, r := range renames {
		if !r.Conflict && !entangled(r, renames) {
			continue
		}
		if err := t.materialize(t.upperPath(r.Path), r.From); err != nil {
			return false, fmt.Errorf("copying %s into %s: %w", r.From, r.Path, err)
		}
		again = true
	}
	return again, nil
}

// entangled: r's source lies inside another's, or its destination is on
// (or around) another's source, so the order of plain renames matters.
func entangled(r Change, renames []Change) bool {
	for _, o := range renames {
		if o.Path == r.Path {
			continue
		}
		if within(r.From, o.From) || within(r.Path, o.From) || within(o.From, r.Path) {
			return true
		}
	}
	return false
}

// within reports whether p is dir or below it.
func within(p, dir string) bool { return p == dir || strings.HasPrefix(p, dir+"/") }

// renamesFirst puts the renames first, a destination before those inside
// it; the other changes keep their order.
func renamesFirst(changes []Change) []Change {
	slices.SortStableFunc(changes, func(a, b Change) int {
		ra, rb := a.Kind == Rename, b.Kind == Rename
		switch {
		case ra && rb:
			return strings.Compare(a.Path, b.Path)
		case ra:
			return -1
		case rb:
			return 1
		}
		return 0
	})
	return changes
}

// flatten materializes the renamed directories inside the upper layer's
// directory up, which stands for no directory of the tree (one the
// command made): a rename cannot bring one there before it exists.
func (t *Tx) flatten(up string) error {
	entries, err := os.ReadDir(up)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		sub := filepath.Join(up, e.Name())
		if r := redirectOf(sub); r != "" && !isOpaque(sub) {
			src, err := redirectSource(r, "")
			if err != nil {
				return err
			}
			if err := t.materialize(sub, src); err != nil {
				return err
			}
			continue
		}
		if err := t.flatten(sub); err != nil {
			return err
		}
	}
	return nil
}

// materialize makes the upper layer's directory up whole: the tree's
// directory lower, which it stands for, merged in (what up lacks is
// copied; its whiteouts stay, for stripMarks), then marks it opaque and
// drops its redirect. Each entry is copied under a temporary name and
// renamed in, so a copy a SIGKILL cut short is made again.
func (t *Tx) materialize(up, lower string) error {
	entries, err := os.ReadDir(up)
	if err != nil {
		return err
	}
	for _, e := range entries {
		sub := filepath.Join(up, e.Name())
		if !e.IsDir() || isOpaque(sub) {
			continue
		}
		if r := redirectOf(sub); r != "" {
			src, err := redirectSource(r, lower)
			if err != nil {
				return err
			}
			err = t.materialize(sub, src)
			if err != nil {
				return err
			}
		} else if fi, err := os.Lstat(t.treePath(path.Join(lower, e.Name()))); err == nil && fi.IsDir() {
			if err := t.materialize(sub, path.Join(lower, e.Name())); err != nil {
				return err
			}
		} else if err := t.flatten(sub); err != nil {
			return err
		}
	}
	if err := t.copyMissing(up, lower); err != nil {
		return err
	}
	return markOpaque(up)
}

// copyMissing copies the entries of the tree's directory lower that the
// upper layer's directory up has not (nor whites out) into it.
func (t *Tx) copyMissing(up, lower string) error {
	entries, err := os.ReadDir(t.treePath(lower))
	if err != nil {
		return err
	}
	tmp := filepath.Join(t.layers(), "materializing")
	for _, e := range entries {
		dst := filepath.Join(up, e.Name())
		if _, err := os.Lstat(dst); !errors.Is(err, os.ErrNotExist) {
			continue // the command's version, a whiteout, or merged above
		}
		if err := removeAll(tmp); err != nil {
			return err
		}
		if err := copyEntry(t.treePath(path.Join(lower, e.Name())), tmp, map[[2]uint64]string{}); err != nil {
			return err
		}
		if err := os.Rename(tmp, dst); err != nil {
			return err
		}
	}
	return nil
}

// markOpaque marks up opaque, in the namespace its redirect was in, then
// drops the redirect: read again, it is a directory the command made.
func markOpaque(up string) error {
	for _, pre := range xattrPrefixes {
		if _, err := unix.Lgetxattr(up, pre+"redirect", nil); err != nil {
			continue
		}
		if err := unix.Lsetxattr(up, pre+"opaque", []byte("y"), 0); err != nil {
			return err
		}
		if err := unix.Lremovexattr(up, pre+"redirect"); err != nil && !errors.Is(err, unix.ENODATA) {
			return err
		}
	}
	return nil
}
