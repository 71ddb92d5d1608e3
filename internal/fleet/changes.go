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
)

// A workspace travels as its base (the task's source, which every worker
// can lay out again) plus one change set per settled step. A change set
// names each path that changed since the previous one with its content
// hash; the content goes to the blob store once, under its hash
// (casKey), whichever step, task or repeat wrote it first.
//
// The change set is found by comparing the workspace with an index of
// what was shipped (path -> stat and hash), as git's index does: a path
// whose stat is unchanged is not read again. This is where the overlay
// transactions of lostwork-tx would plug in: a command's upper layer is
// its change set already, and changedPaths would list it instead of
// walking the tree.

// change is one path of a change set.
type change struct {
	Path    string      `json:"p"`
	Hash    string      `json:"h,omitzero"` // sha256 of a regular file
	Mode    fs.FileMode `json:"m,omitzero"` // type and permissions
	Link    string      `json:"l,omitzero"` // a symbolic link's target
	Deleted bool        `json:"d,omitzero"`
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
}

// index is the shipped state of every path of a workspace.
type index struct {
	entries map[string]indexEntry
}

// statOf reads the stat fields the index compares.
func statOf(info fs.FileInfo) indexEntry {
	e := indexEntry{mode: info.Mode(), size: info.Size(), mtime: info.ModTime().UnixNano()}
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		e.ctime = st.Ctim.Nano()
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

// walkTree calls fn for each file, folder and link of dir but dir.
func walkTree(dir string, skip func(string) bool, fn func(rel string, info fs.FileInfo) error) error {
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // removed while we walk: the agent runs
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
	start := time.Now()
	next := &index{entries: make(map[string]indexEntry, len(ix.entries))}
	var cs changeSet
	seen := make(map[string]bool, len(ix.entries))
	err := walkTree(dir, skip, func(rel string, info fs.FileInfo) error {
		seen[rel] = true
		now := statOf(info)
		old, had := ix.entries[rel]
		if had && !old.racy && (old.sameStat(now) || (info.IsDir() && old.mode == now.mode)) {
			next.entries[rel] = old
			return nil
		}
		c := change{Path: rel, Mode: info.Mode()}
		var data []byte
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			link, err := os.Readlink(filepath.Join(dir, rel))
			if err != nil {
				return err
			}
			c.Link, now.link = link, link
		case info.Mode().IsRegular():
			// Read once: the hash is the content's, even if the file
			// changes while it is read.
			var err error
			if data, err = os.ReadFile(filepath.Join(dir, rel)); errors.Is(err, fs.ErrNotExist) {
				return nil
			} else if err != nil {
				return err
			}
			c.Hash, now.hash = sha(data), sha(data)
			now.racy = start.UnixNano()-now.mtime < int64(racyWindow)
		}
		next.entries[rel] = now
		if had && old.mode == now.mode && old.hash == now.hash && old.link == now.link {
			return nil // touched, not changed
		}
		if c.Hash != "" {
			if err := put(c.Hash, data); err != nil {
				return err
			}
		}
		cs.Changes = append(cs.Changes, c)
		return nil
	})
	if err != nil {
		return cs, nil, err
	}
	for rel := range ix.entries {
		if seen[rel] {
			continue
		}
		cs.Changes = append(cs.Changes, change{Path: rel, Deleted: true})
	}
	slices.SortFunc(cs.Changes, func(a, b change) int { return strings.Compare(a.Path, b.Path) })
	return cs, next, nil
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
	if c.Deleted || (exists && (info.Mode().Type() != c.Mode.Type() || !info.IsDir())) {
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
