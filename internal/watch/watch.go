// Package watch tracks which paths under a directory changed between two
// moments, with inotify watches on every directory (through fsnotify), so
// that a caller can look at what changed instead of scanning the tree.
//
// A Tracker never claims a complete answer it does not have: when events
// were lost (the kernel queue overflowed), a watch could not be placed
// (the watch limit) or the file system cannot report changes (network and
// FUSE file systems), Sync says so and the caller scans instead.
package watch

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Options configure a Tracker.
type Options struct {
	// Skip reports whether a directory (slash-separated, relative to the
	// root) is left out: no watch, no events. The root is never skipped.
	Skip func(rel string) bool
	// MaxWatches bounds the watches of this tracker (0: only the kernel's
	// limit). Past it the tracker stops as if the kernel's limit was
	// reached; tests use it to meet the limit without lowering the
	// machine's.
	MaxWatches int
	// Context, when set, cancels Start's walk (a process that ends
	// before its first command does not wait for the watches).
	Context context.Context
}

// Tracker records the paths that changed under a root since the last Sync.
type Tracker struct {
	root    string
	syncDir string
	opts    Options
	w       *fsnotify.Watcher

	mu      sync.Mutex
	dirs    map[string]bool // watched directories, absolute
	dirty   map[string]bool // rel path -> true when its subtree must be scanned
	lost    string          // why events since the last Sync are incomplete
	stopped error           // tracking ended for good
	waiters map[string]chan struct{}
	seq     int
	done    chan struct{}
}

// ErrUnsupported is returned by Start for a root on a file system whose
// changes inotify does not see (changes made by other machines or by a
// FUSE daemon would be missed).
var ErrUnsupported = errors.New("file system does not report changes to inotify")

// ErrNoInotify is returned by Start where the kernel has no inotify
// (macOS): fsnotify's kqueue holds a descriptor open for every watched
// file, so a large tree would exhaust tiny-go's descriptors; the caller
// scans instead.
var ErrNoInotify = errors.New("no inotify on " + runtime.GOOS)

// ErrLimit is returned when the watches do not fit (the kernel's
// fs.inotify.max_user_watches, or Options.MaxWatches).
var ErrLimit = errors.New("inotify watch limit reached (raise fs.inotify.max_user_watches)")

// Start watches every directory under root (but those opts.Skip leaves
// out) and syncDir, a directory outside the watched tree (or skipped) where
// Sync writes its marker files. It returns when the watches are placed;
// changes from then on are recorded.
func Start(root, syncDir string, opts Options) (*Tracker, error) {
	if err := supported(root); err != nil {
		return nil, err
	}
	w, err := fsnotify.NewBufferedWatcher(4096)
	if err != nil {
		return nil, fmt.Errorf("inotify: %w", err)
	}
	t := &Tracker{root: root, syncDir: syncDir, opts: opts, w: w,
		dirs: map[string]bool{}, dirty: map[string]bool{}, waiters: map[string]chan struct{}{}, done: make(chan struct{})}
	if err := w.Add(syncDir); err != nil {
		w.Close()
		return nil, t.addErr(err)
	}
	if err := t.addTree(root); err != nil {
		w.Close()
		return nil, err
	}
	go t.loop()
	return t, nil
}

func (t *Tracker) addErr(err error) error {
	if errors.Is(err, syscall.ENOSPC) {
		return ErrLimit
	}
	return fmt.Errorf("inotify: %w", err)
}

// addTree watches dir and the directories below it.
func (t *Tracker) addTree(dir string) error {
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == dir && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
			return nil // vanished or unreadable: the snapshot records it
		}
		if !d.IsDir() {
			return nil
		}
		if t.opts.Context != nil && t.opts.Context.Err() != nil {
			return t.opts.Context.Err()
		}
		if rel := t.rel(path); rel != "." && t.opts.Skip != nil && t.opts.Skip(rel) {
			return fs.SkipDir
		}
		t.mu.Lock()
		n := len(t.dirs)
		t.mu.Unlock()
		if t.opts.MaxWatches > 0 && n >= t.opts.MaxWatches {
			return ErrLimit
		}
		if err := t.w.Add(path); err != nil {
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) || errors.Is(err, fs.ErrPermission) {
				return nil
			}
			return t.addErr(err)
		}
		t.mu.Lock()
		t.dirs[path] = true
		t.mu.Unlock()
		return nil
	})
}

func (t *Tracker) rel(path string) string {
	rel, err := filepath.Rel(t.root, path)
	if err != nil {
		return path
	}
	return filepath.ToSlash(rel)
}

func (t *Tracker) loop() {
	defer close(t.done)
	for {
		select {
		case ev, ok := <-t.w.Events:
			if !ok {
				return
			}
			t.event(ev)
		case err, ok := <-t.w.Errors:
			if !ok {
				return
			}
			t.mu.Lock()
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				t.lost = "the kernel's inotify queue overflowed"
			} else {
				t.lost = "inotify: " + err.Error()
			}
			// A marker written while the queue was full is dropped with
			// the rest: the waiting Syncs learn now that they must scan,
			// instead of at their timeout.
			for name, ch := range t.waiters {
				close(ch)
				delete(t.waiters, name)
			}
			t.mu.Unlock()
		}
	}
}

func (t *Tracker) event(ev fsnotify.Event) {
	if filepath.Dir(ev.Name) == t.syncDir {
		t.mu.Lock()
		if ch, ok := t.waiters[filepath.Base(ev.Name)]; ok {
			close(ch)
			delete(t.waiters, filepath.Base(ev.Name))
		}
		t.mu.Unlock()
		return
	}
	rel := t.rel(ev.Name)
	if rel == "." || strings.HasPrefix(rel, "../") {
		return
	}
	if t.opts.Skip != nil && t.skipped(rel) {
		return
	}
	subtree := false
	if ev.Has(fsnotify.Create) {
		// A new directory (made here or moved in) may have been filled
		// before its watch was placed: its whole subtree is looked at.
		if fi, err := os.Lstat(ev.Name); err == nil && fi.IsDir() {
			subtree = true
			if err := t.addTree(ev.Name); err != nil {
				t.mu.Lock()
				t.stopped = err
				t.mu.Unlock()
			}
		}
	}
	if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
		// A directory moved away or removed: what was under it is gone
		// from here (its watches go too).
		t.mu.Lock()
		if t.dirs[ev.Name] {
			subtree = true
			prefix := ev.Name + string(filepath.Separator)
			for d := range t.dirs {
				if d == ev.Name || strings.HasPrefix(d, prefix) {
					delete(t.dirs, d)
					_ = t.w.Remove(d)
				}
			}
		}
		t.mu.Unlock()
	}
	t.mu.Lock()
	t.dirty[rel] = t.dirty[rel] || subtree
	t.mu.Unlock()
}

// skipped reports whether rel or a directory above it is left out.
func (t *Tracker) skipped(rel string) bool {
	for d := rel; ; {
		if t.opts.Skip(d) {
			return true
		}
		i := strings.LastIndexByte(d, '/')
		if i < 0 {
			return false
		}
		d = d[:i]
	}
}

// Changes is what Sync found.
type Changes struct {
	// Paths changed since the previous Sync (slash-separated, relative to
	// the root); true marks a directory whose whole subtree must be
	// looked at.
	Paths map[string]bool
	// Lost, when set, says why Paths may be incomplete: the caller must
	// scan the tree.
	Lost string
}

// Sync returns the paths changed since the previous Sync. Every change
// made before Sync was called is in the answer: Sync writes a marker file
// and waits for its event, which the kernel queues after theirs.
func (t *Tracker) Sync(ctx context.Context) (Changes, error) {
	t.mu.Lock()
	if t.stopped != nil {
		err := t.stopped
		t.mu.Unlock()
		return Changes{}, err
	}
	t.seq++
	name := "sync-" + strconv.Itoa(os.Getpid()) + "-" + strconv.Itoa(t.seq)
	ch := make(chan struct{})
	t.waiters[name] = ch
	t.mu.Unlock()
	marker := filepath.Join(t.syncDir, name)
	lost := ""
	if err := os.WriteFile(marker, nil, 0o600); err != nil {
		lost = "sync marker: " + err.Error()
	} else {
		timer := time.NewTimer(5 * time.Second)
		select {
		case <-ch:
		case <-timer.C:
			lost = "inotify did not report a change within 5s"
		case <-ctx.Done():
			lost = "interrupted"
		case <-t.done:
			lost = "inotify stopped"
		}
		timer.Stop()
		os.Remove(marker)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.waiters, name)
	if t.stopped != nil {
		return Changes{}, t.stopped
	}
	c := Changes{Paths: t.dirty, Lost: t.lost}
	if lost != "" {
		c.Lost = lost
	}
	t.dirty, t.lost = map[string]bool{}, ""
	return c, nil
}

// Lose marks the changes since the last Sync as incomplete, so the next
// Sync asks for a scan (for a caller that knows changes escaped, such as
// a snapshot that failed midway; tests use it to stand for an overflow).
func (t *Tracker) Lose(reason string) {
	t.mu.Lock()
	if t.lost == "" {
		t.lost = reason
	}
	t.mu.Unlock()
}

// Watches is the number of directories watched.
func (t *Tracker) Watches() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.dirs)
}

// Close removes the watches.
func (t *Tracker) Close() error {
	err := t.w.Close()
	<-t.done
	return err
}
