// The delta since the last snapshot: which paths changed (from the watcher,
// else a scan) and storing them.

package checkpoint

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// deltaLocked looks at the changed paths (and every file with several
// hard links: a write through another link reports no event here),
// stores what changed and a manifest of the changes.
func (s *Store) deltaLocked(ctx context.Context, paths map[string]bool) (Record, error) {
	now := time.Now().UnixNano()
	seen, err := s.scanChanged(ctx, paths)
	if err != nil {
		return Record{}, err
	}
	d, err := s.storeChanged(paths, seen)
	if err != nil {
		return Record{}, err
	}
	s.applyDelta(d, seen)
	if len(d.changed) == 0 && len(d.removed) == 0 {
		rec := s.tr.rec
		rec.Bytes = d.added
		return rec, nil
	}
	return s.writeSkipDelta(now, d)
}

// scanChanged is the state now (Absent: gone) of every path that may have
// changed: the changed paths, what was under them, every hard-linked file.
func (s *Store) scanChanged(ctx context.Context, paths map[string]bool) (map[string]manifestFile, error) {
	sc := &deltaScan{s: s, ctx: ctx, seen: s.tr.goneUnder(paths)}
	// A walk below may find again what goneUnder removed.
	for p := range paths {
		delete(sc.seen, p)
		sc.look(p)
	}
	for p := range s.tr.multi {
		if _, ok := paths[p]; !ok {
			sc.look(p)
		}
	}
	if sc.err != nil {
		return nil, sc.err
	}
	if s.git != nil && !s.tr.all {
		s.dropIgnored(ctx, sc.seen)
	}
	return sc.seen, nil
}

// goneUnder marks absent every file under a directory that changed
// wholesale: it is gone unless a walk finds it again. One pass over the
// files for all such directories (an rm -rf of node_modules names
// hundreds of them).
func (tr *tracking) goneUnder(paths map[string]bool) map[string]manifestFile {
	seen := map[string]manifestFile{}
	gone := map[string]bool{}
	for p := range paths {
		if tr.dirs[p] > 0 {
			gone[p] = true
		}
	}
	if len(gone) > 0 {
		for q := range tr.files {
			for d := parentDir(q); d != ""; d = parentDir(d) {
				if gone[d] {
					seen[q] = manifestFile{File: File{Path: q, Absent: true}}
					break
				}
			}
		}
	}
	return seen
}

// deltaScan collects the state now of the paths a delta looks at, so a
// changed directory can be walked by a method of its own.
type deltaScan struct {
	s    *Store
	ctx  context.Context
	seen map[string]manifestFile // path -> its state now (Absent: gone)
	err  error                   // a failed walk (the last one)
}

// look records the state of rel, once; a directory is walked.
func (sc *deltaScan) look(rel string) {
	if _, ok := sc.seen[rel]; ok {
		return
	}
	fi, err := os.Lstat(sc.s.Abs(rel))
	switch {
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
		sc.seen[rel] = manifestFile{File: File{Path: rel, Absent: true}}
		return
	case err != nil:
		sc.seen[rel] = manifestFile{File: File{Path: rel, Missing: "unreadable: " + rootCause(err)}}
		return
	}
	if fi.IsDir() {
		sc.seen[rel] = manifestFile{File: File{Path: rel, Absent: true}} // not a file (any more)
		if rel == stateDirName || fi.Name() == ".git" || sc.s.tr.ignoredDirs[rel] {
			return
		}
		sc.walk(rel)
		return
	}
	sc.seen[rel] = sc.s.fileState(rel, fi)
}

// walk records every file under the changed directory rel: the events
// named the directory, not what is in it.
func (sc *deltaScan) walk(rel string) {
	err := filepath.WalkDir(sc.s.Abs(rel), func(path string, d fs.DirEntry, err error) error {
		if sc.ctx.Err() != nil {
			return sc.ctx.Err()
		}
		r, _ := filepath.Rel(sc.s.cwd, path)
		r = filepath.ToSlash(r)
		if err != nil {
			if r != rel {
				sc.seen[r] = manifestFile{File: File{Path: r, Missing: "unreadable: " + rootCause(err)}}
			}
			return nil
		}
		if d.IsDir() {
			if r != rel && (d.Name() == ".git" || sc.s.tr.ignoredDirs[r]) {
				return fs.SkipDir
			}
			return nil
		}
		if fi, err := d.Info(); err == nil {
			sc.seen[r] = sc.s.fileState(r, fi)
		}
		return nil
	})
	if err != nil {
		sc.err = err
	}
}

// changeSet is what one tracked snapshot changes against the newest one.
type changeSet struct {
	added   int64          // bytes stored
	changed []manifestFile // new or changed files
	removed []string       // paths gone
}

// storeChanged reads and stores what differs from the newest snapshot.
func (s *Store) storeChanged(paths map[string]bool, seen map[string]manifestFile) (*changeSet, error) {
	tr := s.tr
	d := &changeSet{}
	for p, mf := range seen {
		old, had := tr.files[p]
		if mf.Absent {
			if had {
				d.removed = append(d.removed, p)
			}
			continue
		}
		if mf.Missing == "" {
			_, forced := paths[p]
			var keep bool
			var err error
			mf, keep, err = s.stateNow(d, p, mf, old, had, forced)
			if err != nil {
				return nil, err
			}
			if !keep {
				continue
			}
		}
		if had && old.File == mf.File {
			tr.files[p] = mf // new stat data, same state
			continue
		}
		d.changed = append(d.changed, mf)
	}
	return d, nil
}
