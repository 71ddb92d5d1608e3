package checkpoint

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/go-json-experiment/json"

	"github.com/tiny-agent/tiny-go/internal/watch"
)

// tracking makes a snapshot cost what changed since the previous one: a
// watch.Tracker reports the changed paths, and the snapshot looks only at
// them, storing a manifest of the changes against the previous snapshot.
// The first snapshot (the baseline) and any snapshot after lost events are
// full ones, in the store's own mode.
type tracking struct {
	t     *watch.Tracker // nil: tracking fell back for good
	ready chan struct{}  // closed when the baseline is taken (or failed)
	stop  context.CancelFunc

	// The state of the newest snapshot, guarded by the store lock.
	valid bool                    // files describes the newest snapshot
	rec   Record                  // the newest snapshot's record
	hash  string                  // its manifest ("" for a git baseline)
	tree  string                  // the git tree at the root of its chain
	spine []spineEntry            // the chain of the newest snapshot, from the baseline
	files map[string]manifestFile // every path, as in the newest snapshot
	dirs  map[string]int          // files under each directory
	multi map[string]bool         // files with more than one hard link
	ino   map[string]uint64       // inode of each file, to find a new link's other names
	// ignoredDirs are left out of the watches (git mode when ignored
	// files are not covered: directories such as node_modules).
	ignoredDirs map[string]bool
	// all: the snapshots cover git-ignored files too (ignored.go).
	all bool
}

// spineEntry is one manifest of the chain of the newest tracked snapshot.
//
// Tracked manifests form skip deltas (as Subversion stores revisions): the
// d-th snapshot after the baseline stores its changes against snapshot
// d - lowbit(d) (d with its lowest set bit cleared), so it names the
// paths changed since then. A chain is then at most log2(d) manifests
// long, and a path changed once is stored in at most log2(d) manifests
// over the whole chain: a checkpoint of k changed files stores O(k log d)
// manifest bytes amortised, never the whole tree again.
type spineEntry struct {
	seq   int             // snapshots since the baseline (0: the baseline)
	hash  string          // its manifest ("" for a git baseline)
	depth int             // manifests below it (-1: a git tree, none)
	paths map[string]bool // what it names: the paths changed since its base
}

// syncDirName holds the tracker's marker files, outside the watched tree.
const syncDirName = "watch"

// Track starts change tracking: watches on the working directory and the
// first full snapshot, both in the background, so the caller does not wait.
// Snapshots taken before the baseline is done wait for it. When tracking
// cannot be had (watch limit, a file system inotify cannot see) or later
// loses events, snapshots scan the tree as before and warn, once per
// store, says so in one line. Call it once, before the first Snapshot.
func (s *Store) Track(warn func(line string)) {
	if warn == nil {
		warn = func(string) {}
	}
	ctx, cancel := context.WithCancel(context.Background())
	tr := &tracking{ready: make(chan struct{}), stop: cancel}
	s.tr, s.warn = tr, warn
	go func() {
		defer close(tr.ready)
		syncDir, err := ensureDirs(s.root, syncDirName)
		if err != nil {
			s.fellBack("cannot make its marker directory: " + err.Error())
			return
		}
		// Ignored files are covered (ignored.go): every directory is
		// watched.
		tr.ignoredDirs = map[string]bool{}
		t, err := watch.Start(s.cwd, syncDir, watch.Options{Skip: s.skipDir(tr.ignoredDirs), MaxWatches: s.opts.MaxWatches, Context: ctx})
		if ctx.Err() != nil {
			if t != nil {
				t.Close()
			}
			return
		}
		if errors.Is(err, watch.ErrNoInotify) {
			return // macOS: the line at start says checkpoints scan
		}
		if err != nil {
			s.fellBack(err.Error())
			return
		}
		tr.t = t
		unlock, err := s.lock()
		if err != nil {
			return
		}
		defer unlock()
		// Changes made while the baseline is taken are reported at the
		// next snapshot, which looks at them again.
		if _, err := t.Sync(ctx); err != nil {
			s.stopTracking(err.Error())
			return
		}
		if rec := s.baselineLocked(ctx); rec.Missing != "" && ctx.Err() == nil {
			s.warnOnce("tiny-go: no checkpoints in this directory: " + rec.Missing)
		}
	}()
}

// skipDir leaves out what no snapshot holds: the store, .git, and (git
// mode) the ignored directories.
func (s *Store) skipDir(ignored map[string]bool) func(string) bool {
	return func(rel string) bool {
		return rel == stateDirName || rel == ".git" || strings.HasSuffix(rel, "/.git") || ignored[rel]
	}
}

// fellBack ends tracking and says so once.
func (s *Store) fellBack(why string) {
	s.warnOnce("tiny-go: checkpoint tracking fell back to scanning the whole working directory before and after each command (" + why + ")")
}

func (s *Store) warnOnce(line string) {
	if s.warned.CompareAndSwap(false, true) && s.warn != nil {
		s.warn(line)
	}
}

// stopTracking turns tracking off for good. The caller holds the lock.
func (s *Store) stopTracking(why string) {
	if s.tr.t != nil {
		s.tr.t.Close()
		s.tr.t = nil
	}
	s.tr.valid = false
	s.fellBack(why)
}

// trackedSnapshot is Snapshot with tracking on; ok is false when the
// caller must take a full snapshot (tracking is off).
func (s *Store) trackedSnapshot(ctx context.Context) (Record, bool) {
	tr := s.tr
	if tr.t == nil {
		return Record{}, false
	}
	ch, err := tr.t.Sync(ctx)
	if err != nil {
		s.stopTracking(err.Error())
		return Record{}, false
	}
	if ch.Lost != "" || !tr.valid {
		if ch.Lost != "" {
			s.warnOnce("tiny-go: checkpoint tracking lost changes (" + ch.Lost + "); this checkpoint scanned the whole working directory")
		}
		return s.baselineLocked(ctx), true
	}
	if len(ch.Paths) == 0 && len(tr.multi) == 0 {
		rec := tr.rec
		rec.Bytes = 0
		return rec, true
	}
	rec, err := s.deltaLocked(ctx, ch.Paths)
	s.accountLocked(rec.Bytes)
	if err != nil {
		// The state in memory may be half updated: the next snapshot
		// scans the whole tree again.
		tr.valid = false
		return Record{Missing: rootCause(err)}, true
	}
	return rec, true
}

// baselineLocked takes a full snapshot and loads it as the state the next
// snapshots change.
func (s *Store) baselineLocked(ctx context.Context) Record {
	tr := s.tr
	tr.valid = false
	rec := s.fullSnapshotLocked(ctx)
	if rec.Missing != "" {
		return rec
	}
	tr.all = rec.All
	var files map[string]File
	var err error
	files, err = s.treeFiles(rec.Tree)
	if strings.HasPrefix(rec.Tree, schemeGit) {
		tr.tree, tr.hash = strings.TrimPrefix(rec.Tree, schemeGit), ""
	} else {
		tr.tree, tr.hash = "", strings.TrimPrefix(rec.Tree, "plain:")
	}
	if err != nil {
		return rec
	}
	tr.files = make(map[string]manifestFile, len(files))
	tr.dirs, tr.multi, tr.ino = map[string]int{}, map[string]bool{}, map[string]uint64{}
	for p, f := range files {
		mf := manifestFile{File: f}
		if fi, err := os.Lstat(s.Abs(p)); err == nil {
			mf.Size, mf.Mtime = fi.Size(), fi.ModTime().UnixNano()
			if st, ok := fi.Sys().(*syscall.Stat_t); ok && fi.Mode().IsRegular() {
				tr.ino[p] = st.Ino
				if st.Nlink > 1 {
					tr.multi[p] = true
				}
			}
		}
		tr.put(mf)
	}
	for _, f := range rec.Files {
		tr.put(manifestFile{File: f})
	}
	root := spineEntry{hash: tr.hash, depth: -1}
	if tr.hash != "" && s.last != nil && s.lastHash == tr.hash {
		root.depth = s.last.Depth
	} else if tr.all {
		root.depth = 0 // the ignored files' manifest, on the git tree
	} else if tr.hash != "" {
		root.depth = maxChain // unknown: the next full scan writes a whole list
	}
	tr.rec, tr.spine, tr.valid = rec, []spineEntry{root}, true
	return rec
}

func (tr *tracking) put(mf manifestFile) {
	if _, ok := tr.files[mf.Path]; !ok {
		for d := parentDir(mf.Path); d != ""; d = parentDir(d) {
			tr.dirs[d]++
		}
	}
	tr.files[mf.Path] = mf
}

func (tr *tracking) remove(p string) {
	if _, ok := tr.files[p]; !ok {
		return
	}
	delete(tr.files, p)
	delete(tr.multi, p)
	delete(tr.ino, p)
	for d := parentDir(p); d != ""; d = parentDir(d) {
		if tr.dirs[d]--; tr.dirs[d] <= 0 {
			delete(tr.dirs, d)
		}
	}
}

func parentDir(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[:i]
	}
	return ""
}

// stateNow reads a present file and stores its content when new; keep is
// false when the delta has nothing to say about it (a hard-linked file not
// written) or it is gone (then noted in d.removed).
func (s *Store) stateNow(d *changeSet, p string, mf, old manifestFile, had, forced bool) (_ manifestFile, keep bool, _ error) {
	if had && !forced && old.Hash != "" && old.Size == mf.Size && old.Mtime == mf.Mtime && old.Mode == mf.Mode && old.Link == mf.Link {
		return mf, false, nil // a hard-linked file not written
	}
	data, err := s.content(p, mf)
	switch {
	case errors.Is(err, errTooLarge):
		mf.Missing = "larger than " + formatBytes(s.opts.MaxFileSize)
	case errors.Is(err, fs.ErrNotExist):
		if had {
			d.removed = append(d.removed, p)
		}
		return mf, false, nil
	case err != nil:
		mf.Missing = "unreadable: " + rootCause(err)
	default:
		if err := s.keepContent(d, p, &mf, old, had, data); err != nil {
			return mf, false, err
		}
	}
	return mf, true, nil
}

// keepContent gives mf the hash of data, storing data unless it is the
// old content, or, past half the cap, names it missing instead.
func (s *Store) keepContent(d *changeSet, p string, mf *manifestFile, old manifestFile, had bool, data []byte) error {
	if had && old.Hash != "" && s.hashLike(old.Hash, data) == old.Hash {
		mf.Hash = old.Hash // same content (a touch, a rewrite)
		return nil
	}
	if d.added+int64(len(data)) > s.opts.Cap/2 {
		// Keep what fits; the rest is named by a rewind.
		mf.Missing = fmt.Sprintf("the changed files take more than half the checkpoint store's cap (%s; raise TINY_CHECKPOINT_CAP)", formatBytes(s.opts.Cap))
		return nil
	}
	h, n, err := s.putBlob(data)
	if err != nil {
		return fmt.Errorf("store %s: %w", p, err)
	}
	mf.Hash, d.added = h, d.added+n
	return nil
}

// applyDelta makes the tracked state the one just seen and notes the
// inodes (and new hard links) of the files seen.
func (s *Store) applyDelta(d *changeSet, seen map[string]manifestFile) {
	tr := s.tr
	for _, p := range d.removed {
		tr.remove(p)
	}
	for _, mf := range d.changed {
		tr.put(mf)
	}
	for p, mf := range seen {
		if !mf.Absent && !mf.Link {
			tr.linked(p, s.Abs(p))
		}
	}
}

// writeSkipDelta stores the manifest of a snapshot with changes, as a
// skip delta (see spineEntry), and makes it the newest snapshot.
func (s *Store) writeSkipDelta(now int64, d *changeSet) (Record, error) {
	tr := s.tr
	added := d.added
	seq, i := tr.skipBase()
	names := tr.namedSince(i, d)
	m := tr.skipManifest(now, tr.spine[i], names)
	data, err := json.Marshal(m)
	if err != nil {
		return Record{}, err
	}
	h, n, err := s.putBlob(data)
	if err != nil {
		return Record{}, err
	}
	added += n
	tr.hash = h
	tr.spine = append(tr.spine[:i+1], spineEntry{seq: seq, hash: h, depth: m.Depth, paths: names})
	if s.git == nil {
		// The base of a full scan in the next process.
		s.last, s.lastHash = nil, ""
		_ = writeAtomic(filepath.Join(s.root, lastManifestFile), []byte(h), fileMode, false)
	}
	tr.rec = Record{Tree: "plain:" + h, All: tr.all}
	return Record{Tree: "plain:" + h, Bytes: added, All: tr.all}, nil
}

// skipBase is the next snapshot's seq and the index in the spine of its
// base: the changes are stored since snapshot seq&(seq-1) of the chain.
func (tr *tracking) skipBase() (seq, i int) {
	seq = tr.spine[len(tr.spine)-1].seq + 1
	i = len(tr.spine) - 1
	for tr.spine[i].seq > seq&(seq-1) {
		i--
	}
	return seq, i
}

// namedSince is every path changed since the base at spine index i: this
// delta's and those the manifests above the base named.
func (tr *tracking) namedSince(i int, d *changeSet) map[string]bool {
	names := make(map[string]bool, len(d.changed)+len(d.removed))
	for _, mf := range d.changed {
		names[mf.Path] = true
	}
	for _, p := range d.removed {
		names[p] = true
	}
	for _, e := range tr.spine[i+1:] {
		for p := range e.paths {
			names[p] = true
		}
	}
	return names
}

// skipManifest is the manifest naming the current state of names on base,
// sorted so equal states store equal blobs.
func (tr *tracking) skipManifest(now int64, base spineEntry, names map[string]bool) *manifest {
	m := &manifest{Taken: now, Base: base.hash, Depth: base.depth + 1}
	if base.hash == "" {
		m.Tree = tr.tree
	}
	for p := range names {
		if mf, ok := tr.files[p]; ok {
			m.Files = append(m.Files, mf)
		} else {
			m.Removed = append(m.Removed, p)
		}
	}
	slices.SortFunc(m.Files, func(a, b manifestFile) int { return strings.Compare(a.Path, b.Path) })
	slices.Sort(m.Removed)
	return m
}

// fileState is the manifest entry of a file from its stat data.
func (s *Store) fileState(rel string, fi fs.FileInfo) manifestFile {
	if !fi.Mode().IsRegular() && fi.Mode()&fs.ModeSymlink == 0 {
		return manifestFile{File: File{Path: rel, Absent: true}} // not content
	}
	return manifestFile{File: File{Path: rel, Mode: uint32(fi.Mode().Perm()), Link: fi.Mode()&fs.ModeSymlink != 0}, Size: fi.Size(), Mtime: fi.ModTime().UnixNano()}
}

func (s *Store) content(rel string, mf manifestFile) ([]byte, error) {
	if mf.Link {
		t, err := os.Readlink(s.Abs(rel))
		return []byte(t), err
	}
	if mf.Size > s.opts.MaxFileSize {
		return nil, errTooLarge
	}
	return readCapped(s.Abs(rel), s.opts.MaxFileSize)
}

// linked notes a file's inode and, when it has several hard links, keeps
// it and its other names in the tree in multi: a write through one name
// reports no event for the others.
func (tr *tracking) linked(rel, abs string) {
	fi, err := os.Lstat(abs)
	if err != nil || !fi.Mode().IsRegular() {
		return
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return
	}
	tr.ino[rel] = st.Ino
	if st.Nlink <= 1 {
		delete(tr.multi, rel)
		return
	}
	if !tr.multi[rel] {
		tr.multi[rel] = true
		for p, ino := range tr.ino { // rare: a command made a hard link
			if ino == st.Ino {
				tr.multi[p] = true
			}
		}
	}
}

// dropIgnored leaves out new paths git ignores (paths the newest snapshot
// has are kept: a tracked file stays tracked).
func (s *Store) dropIgnored(ctx context.Context, seen map[string]manifestFile) {
	var ask []byte
	for p, mf := range seen {
		if _, had := s.tr.files[p]; !had && !mf.Absent {
			ask = append(append(ask, p...), 0)
		}
	}
	if len(ask) == 0 {
		return
	}
	cmd := s.git.command(ctx, "check-ignore", "--no-index", "-z", "--stdin")
	cmd.Stdin = bytes.NewReader(ask)
	out, _ := cmd.Output() // exit 1: nothing ignored
	for _, p := range bytes.Split(out, []byte{0}) {
		if len(p) > 0 {
			delete(seen, string(p))
		}
	}
}

// TrackLazily is Track deferred to the first tree snapshot: a process
// whose answer runs no command (or whose commands need no whole-tree
// snapshot) never walks the tree, and start-up does no work for it.
func (s *Store) TrackLazily(warn func(line string)) {
	s.lazyWarn = warn
	s.lazy = true
}

// startLazy starts the tracking TrackLazily asked for, once.
func (s *Store) startLazy() {
	if s.lazy {
		s.lazyOnce.Do(func() { s.Track(s.lazyWarn) })
	}
}
