package overlay

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// Kind is what a change does to the tree.
type Kind string

const (
	// Put brings the upper layer's entry (a file, a symlink, or a whole
	// new directory) to the path, moving the tree's entry aside first.
	Put Kind = "put"
	// Delete moves the tree's entry (a whole directory) aside: a whiteout.
	Delete Kind = "delete"
	// Chmod changes the mode of a directory both layers have (the
	// command changed entries below it, or its mode).
	Chmod Kind = "chmod"
	// Rename moves the tree's directory From to Path (the overlay's
	// redirect_dir: the command renamed a directory of the tree), before
	// any other change; the changes below Path are then applied inside it.
	Rename Kind = "rename"
)

// Change is one path the command changed.
type Change struct {
	Path string `json:"path"` // slash-separated, relative to the tree; "." is the tree itself
	Kind Kind   `json:"kind"`
	// Had says the tree had an entry at Path when the command ended: Apply
	// moves it to orig/Path.
	Had bool `json:"had,omitempty"`
	// Mode and Old are a Chmod's new and earlier mode bits.
	Mode uint32 `json:"mode,omitempty"`
	Old  uint32 `json:"old,omitempty"`
	// Conflict says another program changed the tree's entry while the
	// command ran: Apply leaves the tree's entry and keeps the command's
	// version in conflicts/Path.
	Conflict bool `json:"conflict,omitempty"`
	// From is where the tree's entry that Path stands for was when the
	// command began, when not at Path: a Rename's source, or the entry
	// below a renamed directory. Ino is a Rename's source directory's
	// inode, which tells a step run again whether it is done.
	From string `json:"from,omitempty"`
	Ino  uint64 `json:"ino,omitempty"`
}

// lower is the tree's path of the entry the change replaces.
func (c Change) lower() string {
	if c.From != "" && c.Kind != Rename {
		return c.From
	}
	return c.Path
}

// StateDirName is the tree's entry that never takes part: tiny-go's own
// state (read-only to commands).
const StateDirName = ".tiny-agent"

// Changes reads the upper layer: what the command changed, in path order
// (a directory before what is below it).
func (t *Tx) Changes() ([]Change, error) {
	var out []Change
	var root, tree unix.Stat_t
	if err := unix.Lstat(t.Upper(), &root); err != nil {
		return nil, err
	}
	if err := unix.Lstat(t.Tree, &tree); err != nil {
		return nil, err
	}
	if root.Mode&0o7777 != tree.Mode&0o7777 {
		out = append(out, Change{Path: ".", Kind: Chmod, Had: true, Mode: uint32(root.Mode & 0o7777), Old: uint32(tree.Mode & 0o7777), Conflict: t.changedSince(&tree)})
	}
	for {
		changes := out
		if err := t.scan("", "", &changes); err != nil {
			return nil, err
		}
		again, err := t.settle(changes)
		if err != nil {
			return nil, err
		}
		if !again {
			return renamesFirst(changes), nil
		}
	}
}

// scan appends the changes below the upper layer's directory rel, whose
// entries stand for those of the tree's directory lower.
func (t *Tx) scan(rel, lower string, out *[]Change) error {
	entries, err := os.ReadDir(filepath.Join(t.Upper(), filepath.FromSlash(rel)))
	if err != nil {
		return err
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.Name())
	}
	slices.Sort(names)
	for _, name := range names {
		if rel == "" && name == StateDirName {
			continue
		}
		p := path.Join(rel, name)
		if err := t.scanEntry(p, path.Join(lower, name), out); err != nil {
			return err
		}
	}
	return nil
}

// scanEntry appends the changes of the upper layer's entry p, which
// stands for the tree's entry lower.
func (t *Tx) scanEntry(p, lower string, out *[]Change) error {
	up := filepath.Join(t.Upper(), filepath.FromSlash(p))
	var ust, lst unix.Stat_t
	if err := unix.Lstat(up, &ust); err != nil {
		return err
	}
	lerr := unix.Lstat(filepath.Join(t.Tree, filepath.FromSlash(lower)), &lst)
	had := lerr == nil
	if lerr != nil && !errors.Is(lerr, unix.ENOENT) && !errors.Is(lerr, unix.ENOTDIR) {
		return &fs.PathError{Op: "lstat", Path: lower, Err: lerr}
	}
	c := Change{Path: p, Had: had, Conflict: had && t.changedSince(&lst)}
	if lower != p {
		c.From = lower
	}
	opaque := isDir(&ust) && isOpaque(up)
	switch {
	case isWhiteout(up, &ust):
		if !had {
			return nil // deleted what the command itself made, or gone since
		}
		c.Kind = Delete
	case isDir(&ust) && !opaque && redirectOf(up) != "":
		return t.scanRenamed(c, up, &ust, lower, out)
	case isDir(&ust) && had && isDir(&lst) && !opaque:
		if ust.Mode&0o7777 != lst.Mode&0o7777 {
			*out = append(*out, Change{Path: p, Kind: Chmod, Had: true, Mode: uint32(ust.Mode & 0o7777), Old: uint32(lst.Mode & 0o7777), Conflict: c.Conflict})
		}
		return t.scan(p, lower, out)
	default:
		c.Kind = Put
		if isDir(&ust) {
			// A directory the command made may hold one it moved in
			// from the tree: that one is copied in whole first.
			if err := t.flatten(up); err != nil {
				return err
			}
		}
	}
	*out = append(*out, c)
	return nil
}

// changedSince reports whether the tree's entry changed after Begin: the
// command never writes the tree, so someone else did.
func (t *Tx) changedSince(st *unix.Stat_t) bool {
	return st.Ctim.Sec > t.base.Sec || (st.Ctim.Sec == t.base.Sec && st.Ctim.Nsec > t.base.Nsec)
}

func isDir(st *unix.Stat_t) bool { return st.Mode&unix.S_IFMT == unix.S_IFDIR }

// Overlay's marks, as the kernel writes them: trusted.overlay.* when it
// was mounted with full privileges, user.overlay.* in a user namespace
// (userxattr).
var xattrPrefixes = []string{"trusted.overlay.", "user.overlay."}

// isWhiteout: a character device 0:0, or (where the kernel cannot make
// one) an empty file marked overlay.whiteout.
func isWhiteout(p string, st *unix.Stat_t) bool {
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFCHR:
		return st.Rdev == 0
	case unix.S_IFREG:
		return st.Size == 0 && hasXattr(p, "whiteout")
	}
	return false
}

// isOpaque: a directory that hides the tree's directory of that name
// ("y"; "x" only says that whiteouts inside are xattr files).
func isOpaque(p string) bool {
	for _, pre := range xattrPrefixes {
		buf := make([]byte, 8)
		n, err := unix.Lgetxattr(p, pre+"opaque", buf)
		if err == nil && n >= 1 && buf[0] == 'y' {
			return true
		}
	}
	return false
}

func hasXattr(p, name string) bool {
	for _, pre := range xattrPrefixes {
		if _, err := unix.Lgetxattr(p, pre+name, nil); err == nil {
			return true
		}
	}
	return false
}

// stripMarks removes overlay's xattrs from p and, in a directory, whiteouts
// and marks below it: what moves into the tree is plain files.
func stripMarks(p string) error {
	return filepath.WalkDir(p, func(q string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		var st unix.Stat_t
		if err := unix.Lstat(q, &st); err != nil {
			return err
		}
		if q != p && isWhiteout(q, &st) {
			return os.Remove(q)
		}
		return dropXattrs(q)
	})
}

func dropXattrs(p string) error {
	buf := make([]byte, 1024)
	n, err := unix.Llistxattr(p, buf)
	if errors.Is(err, unix.ERANGE) {
		if n, err = unix.Llistxattr(p, nil); err == nil {
			buf = make([]byte, n)
			n, err = unix.Llistxattr(p, buf)
		}
	}
	if err != nil {
		if errors.Is(err, unix.ENOTSUP) {
			return nil
		}
		return err
	}
	for name := range strings.SplitSeq(string(buf[:n]), "\x00") {
		for _, pre := range xattrPrefixes {
			if strings.HasPrefix(name, pre) {
				if err := unix.Lremovexattr(p, name); err != nil && !errors.Is(err, unix.ENODATA) {
					return err
				}
			}
		}
	}
	return nil
}
