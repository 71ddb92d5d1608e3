package fleet

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// A workspace travels as its base (the task's source, which every worker
// can lay out again) plus one change set per settled step. A change set
// names each path that changed since the previous one with its content
// hash; the content goes to the blob store once, under its hash
// (casKey), whichever step, task or repeat wrote it first.
//
// The change set is found by comparing the workspace with an index of
// what was shipped (path -> stat and hash), as git's index does: a path
// whose stat is unchanged is not read again. When the workspace is an
// overlay on the worker's cached base (cache.go), only its upper layer
// can differ from the base, so only the upper layer is walked: a step
// costs what it changed, not the size of the tree. The per-command
// overlay transactions of lostwork-tx would plug in the same way: a
// command's upper layer is its change set already.

// change is one path of a change set.
type change struct {
	Path    string      `json:"p"`
	Hash    string      `json:"h,omitzero"` // sha256 of a regular file
	Mode    fs.FileMode `json:"m,omitzero"` // type and permissions
	Link    string      `json:"l,omitzero"` // a symbolic link's target
	Deleted bool        `json:"d,omitzero"`
	// Opaque: a folder made anew where the base had one; what the base
	// had in it is gone (its current paths follow in the change set).
	Opaque bool `json:"o,omitzero"`
}

// changeSet is what one step changed, in path order.
type changeSet struct {
	Changes []change `json:"changes"`
}

// indexEntry is what was shipped for a path, and the stat it had then.
type indexEntry struct {
	mode       fs.FileMode
	size       int64
	mtime      int64
	ctime      int64
	ino        uint64
	hash, link string
	racy       bool // changed too close to the scan to trust its stat
	deleted    bool // a path of the base, deleted (overlay: a whiteout)
	opaque     bool
	redirect   string // overlay: a folder moved here, from where
}

// index is the shipped state of every path of a workspace, or, when
// upper is set, of every path of the overlay's upper layer (the rest is
// the base).
type index struct {
	entries map[string]indexEntry
	upper   string
}

// statOf reads the stat fields the index compares.
func statOf(info fs.FileInfo) indexEntry {
	e := indexEntry{mode: info.Mode(), size: info.Size(), mtime: info.ModTime().UnixNano()}
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		e.ctime = ctimeOf(st)
		e.ino = st.Ino
	}
	return e
}

func (e indexEntry) sameStat(o indexEntry) bool {
	return e.mode == o.mode && e.size == o.size && e.mtime == o.mtime && e.ctime == o.ctime && e.ino == o.ino
}

// racyWindow covers the file system's timestamp granularity: a file
// written within it of the scan may change again with the same stat.
const racyWindow = 20 * time.Millisecond

// walkIndex records the stat of every path of dir (the base), hashing
// nothing: a path whose stat changes later is shipped.
func walkIndex(dir string, skip func(string) bool) (*index, error) {
	ix := &index{entries: map[string]indexEntry{}}
	err := walkTree(dir, skip, func(rel string, info fs.FileInfo) error {
		ix.entries[rel] = statOf(info)
		return nil
	})
	return ix, err
}

// walkRel walks dir, calling fn with each path below it and its name
// relative to dir (with slashes); what skip names is left out (a folder
// with all below it), and so is what is removed while it walks (the
// agent runs meanwhile).
func walkRel(dir string, skip func(string) bool, fn func(path, rel string, d fs.DirEntry) error) error {
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		rel := filepath.ToSlash(path[min(len(dir)+1, len(path)):])
		if rel == "" {
			return nil
		}
		if skip != nil && skip(rel) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		return fn(path, rel, d)
	})
}

// walkTree calls fn for each file, folder and link of dir but dir.
func walkTree(dir string, skip func(string) bool, fn func(rel string, info fs.FileInfo) error) error {
	return walkRel(dir, skip, func(_, rel string, d fs.DirEntry) error {
		info, err := d.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		} else if err != nil {
			return err
		}
		if t := info.Mode().Type(); t != 0 && t != fs.ModeDir && t != fs.ModeSymlink {
			return nil // sockets, fifos: nothing to restore
		}
		return fn(rel, info)
	})
}

// scan compares dir with ix and returns the change set and the index
// that holds once it is shipped; put stores a file's content under its
// hash. ix itself is not changed (a failed upload ships nothing).
func (ix *index) scan(dir string, skip func(string) bool, put func(hash string, data []byte) error) (changeSet, *index, error) {
	sc := &scanner{ix: ix, dir: dir, put: put, start: time.Now(), seen: map[string]bool{},
		next: &index{entries: make(map[string]indexEntry, len(ix.entries)), upper: ix.upper}}
	var err error
	if ix.upper == "" {
		err = walkTree(dir, skip, sc.visit)
	} else {
		err = sc.walkUpper(skip)
	}
	if err != nil {
		return changeSet{}, nil, err
	}
	sc.unseen()
	slices.SortFunc(sc.cs.Changes, func(a, b change) int { return strings.Compare(a.Path, b.Path) })
	return sc.cs, sc.next, nil
}

// scanner is one scan's state.
type scanner struct {
	ix, next *index
	dir      string
	put      func(hash string, data []byte) error
	start    time.Time
	seen     map[string]bool
	cs       changeSet
	// cleared are folders found opaque in this scan: what the index had
	// under them is shipped again.
	cleared []string
}

// visit compares one path of the workspace with the index.
func (sc *scanner) visit(rel string, info fs.FileInfo) error {
	sc.seen[rel] = true
	now := statOf(info)
	old, had := sc.ix.entries[rel]
	for _, c := range sc.cleared {
		had = had && !strings.HasPrefix(rel, c)
	}
	had = had && !old.deleted
	if had && !old.racy && (old.sameStat(now) || (info.IsDir() && old.mode == now.mode)) {
		now = old
		sc.next.entries[rel] = now
		return nil
	}
	c := change{Path: rel, Mode: info.Mode()}
	var data []byte
	switch {
	case info.Mode()&fs.ModeSymlink != 0:
		link, err := os.Readlink(filepath.Join(sc.dir, rel))
		if err != nil {
			return err
		}
		c.Link, now.link = link, link
	case info.Mode().IsRegular():
		// Read once: the hash is the content's, even if the file
		// changes while it is read.
		var err error
		if data, err = os.ReadFile(filepath.Join(sc.dir, rel)); errors.Is(err, fs.ErrNotExist) {
			return nil
		} else if err != nil {
			return err
		}
		c.Hash, now.hash = sha(data), sha(data)
		now.racy = sc.start.UnixNano()-now.mtime < int64(racyWindow)
	}
	sc.next.entries[rel] = now
	if had && old.mode == now.mode && old.hash == now.hash && old.link == now.link {
		return nil // touched, not changed
	}
	if c.Hash != "" {
		if err := sc.put(c.Hash, data); err != nil {
			return err
		}
	}
	sc.cs.Changes = append(sc.cs.Changes, c)
	return nil
}

// walkUpper visits the paths of the overlay's upper layer as the
// workspace shows them: a whiteout is a deleted path of the base, an
// opaque folder one made anew.
func (sc *scanner) walkUpper(skip func(string) bool) error {
	return walkRel(sc.ix.upper, skip, func(path, rel string, _ fs.DirEntry) error {
		info, err := os.Lstat(filepath.Join(sc.dir, rel))
		if errors.Is(err, fs.ErrNotExist) {
			return sc.deleted(rel)
		} else if err != nil {
			return err
		}
		if t := info.Mode().Type(); t != 0 && t != fs.ModeDir && t != fs.ModeSymlink {
			return nil
		}
		if info.IsDir() && isOpaque(path) && !sc.ix.entries[rel].opaque {
			sc.anew(rel, info, indexEntry{opaque: true})
			return nil
		}
		if r := redirect(path); info.IsDir() && r != "" && sc.ix.entries[rel].redirect != r {
			// A folder moved here (tiny-go moves originals aside): the
			// upper layer has only what changed in it, the rest is the
			// base's folder it came from. Shipped whole, once.
			sc.anew(rel, info, indexEntry{redirect: r})
			return sc.walkMerged(rel, skip)
		}
		return sc.visit(rel, info)
	})
}

// anew ships folder rel as made anew (what the index had below it is
// gone); marks are the entry's opaque or redirect.
func (sc *scanner) anew(rel string, info fs.FileInfo, marks indexEntry) {
	sc.seen[rel] = true
	e := statOf(info)
	e.opaque, e.redirect = marks.opaque, marks.redirect
	sc.next.entries[rel] = e
	sc.cs.Changes = append(sc.cs.Changes, change{Path: rel, Mode: info.Mode(), Opaque: true})
	sc.cleared = append(sc.cleared, rel+"/")
}

// walkMerged visits every path below folder rel as the workspace shows
// it.
func (sc *scanner) walkMerged(rel string, skip func(string) bool) error {
	err := walkTree(filepath.Join(sc.dir, filepath.FromSlash(rel)), nil, func(sub string, info fs.FileInfo) error {
		p := rel + "/" + sub
		if skip != nil && skip(p) {
			return nil
		}
		return sc.visit(p, info)
	})
	if err != nil {
		return err
	}
	return filepath.SkipDir // the upper layer's part of it was in the walk
}

// deleted notes a path the workspace no longer has.
func (sc *scanner) deleted(rel string) error {
	sc.seen[rel] = true
	sc.next.entries[rel] = indexEntry{deleted: true}
	if !sc.ix.entries[rel].deleted {
		sc.cs.Changes = append(sc.cs.Changes, change{Path: rel, Deleted: true})
	}
	return nil
}

// unseen ships the deletion of indexed paths the walk did not meet.
func (sc *scanner) unseen() {
	for rel, old := range sc.ix.entries {
		if sc.seen[rel] || old.deleted {
			continue
		}
		if sc.ix.upper != "" {
			if _, err := os.Lstat(filepath.Join(sc.dir, rel)); err == nil {
				sc.next.entries[rel] = old // in the base again
				continue
			}
		}
		sc.cs.Changes = append(sc.cs.Changes, change{Path: rel, Deleted: true})
	}
}

// isOpaque says whether an upper folder hides the base's folder under it.
func isOpaque(path string) bool {
	buf := make([]byte, 4)
	n, err := unix.Lgetxattr(path, "trusted.overlay.opaque", buf)
	return err == nil && n == 1 && buf[0] == 'y'
}

// redirect is where an upper folder was moved from ("" for none).
func redirect(path string) string {
	buf := make([]byte, 4096)
	n, err := unix.Lgetxattr(path, "trusted.overlay.redirect", buf)
	if err != nil {
		return ""
	}
	return string(buf[:n])
}

// casKey is the blob key of content with the given sha256: shared by every
// task of every suite in the store.
func casKey(hash string) string { return "cas/sha256/" + hash[:2] + "/" + hash }

// apply makes dir what cs says, getting content by hash. Nothing is
// written outside dir (os.Root refuses names and links that leave it).
func (cs changeSet) apply(ctx context.Context, dir string, get func(ctx context.Context, hash string) ([]byte, error)) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	for _, c := range cs.Changes {
		name := filepath.FromSlash(c.Path)
		if !filepath.IsLocal(name) {
			return fmt.Errorf("change set: %q leaves the workspace", c.Path)
		}
		if err := applyOne(ctx, root, name, c, get); err != nil {
			return fmt.Errorf("change set: %s: %w", c.Path, err)
		}
	}
	return nil
}

func applyOne(ctx context.Context, root *os.Root, name string, c change, get func(ctx context.Context, hash string) ([]byte, error)) error {
	info, err := root.Lstat(name)
	exists := err == nil
	if c.Deleted || c.Opaque || (exists && (info.Mode().Type() != c.Mode.Type() || !info.IsDir())) {
		// A path under one that became a file is gone already.
		if err := root.RemoveAll(name); err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
			return err
		}
		exists = false
	}
	if c.Deleted {
		return nil
	}
	if parent := filepath.Dir(name); parent != "." {
		if err := root.MkdirAll(parent, 0o755); err != nil {
			return err
		}
	}
	switch {
	case c.Mode.IsDir():
		if !exists {
			if err := root.Mkdir(name, c.Mode.Perm()|0o700); err != nil {
				return err
			}
		}
		return root.Chmod(name, c.Mode.Perm())
	case c.Mode&fs.ModeSymlink != 0:
		return root.Symlink(c.Link, name)
	default:
		data, err := get(ctx, c.Hash)
		if err != nil {
			return err
		}
		if err := root.WriteFile(name, data, c.Mode.Perm()); err != nil {
			return err
		}
		return root.Chmod(name, c.Mode.Perm())
	}
}
