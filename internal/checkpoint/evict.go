package checkpoint

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/tiny-agent/tiny-go/internal/store"
)

// EvictionRule is how the store stays under its cap, in words for
// `session show`.
const EvictionRule = "when a checkpoint pushes the store past its cap, the oldest checkpoints of this directory (all sessions) are dropped first, down to 90% of the cap; a rewind that needs a dropped one says so"

// droppedFile holds the eviction cutoff: checkpoints taken before this
// time (ms) are dropped.
const droppedFile = "dropped-before"

const droppedReason = "dropped to keep the checkpoint store under its cap"

// Info describes a store for `session show`.
type Info struct {
	Dir           string
	Mode          string // git or plain
	Size          int64
	Cap           int64
	DroppedBefore int64 // ms; 0 when nothing was dropped
}

// Stat describes the store of cwd without creating or changing anything.
func Stat(cwd string, capBytes int64) (Info, error) {
	root, err := store.StateDir(cwd, dirName, false)
	if err != nil {
		return Info{}, err
	}
	info := Info{Dir: root, Mode: "plain", Size: dirSize(root), Cap: Options{Cap: capBytes}.withDefaults().Cap}
	if _, err := os.Lstat(filepath.Join(root, "git")); err == nil {
		info.Mode = "git"
	}
	info.DroppedBefore = readCutoff(root)
	return info, nil
}

func readCutoff(root string) int64 {
	data, err := os.ReadFile(filepath.Join(root, droppedFile))
	if err != nil {
		return 0
	}
	n, _ := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
	return n
}

// applyCutoff marks records taken before the cutoff as dropped.
func (s *Store) applyCutoff(recs []Record) []Record {
	cut := readCutoff(s.root)
	if cut == 0 {
		return recs
	}
	out := make([]Record, len(recs))
	for i, r := range recs {
		if r.At < cut {
			r.Tree, r.Git = "", ""
			if r.Tool == "write" || r.Tool == "edit" || r.Rewind != "" {
				files := make([]File, len(r.Files))
				for j, f := range r.Files {
					files[j] = File{Path: f.Path, Missing: droppedReason}
				}
				r.Files = files
			} else {
				r.Missing, r.Files = droppedReason, nil
			}
		}
		out[i] = r
	}
	return out
}

// size is the bytes of the store.
func (s *Store) size() int64 { return dirSize(s.root) }

// evictLocked drops the oldest checkpoints of the directory until the
// store is under 90% of its cap. The caller holds the store lock.
func (s *Store) evictLocked(ctx context.Context) error {
	size := s.size()
	if size <= s.opts.Cap {
		return nil
	}
	target := s.opts.Cap / 10 * 9
	recs, err := s.allRecords()
	if err != nil {
		return err
	}
	slices.SortStableFunc(recs, func(a, b Record) int { return int(a.At - b.At) })
	cut := readCutoff(s.root)
	for range 4 {
		freed := int64(0)
		next := cut
		for _, r := range recs {
			if r.At < cut {
				continue
			}
			next = r.At + 1
			freed += r.Bytes
			if size-freed <= target {
				break
			}
		}
		if next <= cut {
			break
		}
		cut = next
		if err := writeAtomic(filepath.Join(s.root, droppedFile), []byte(strconv.FormatInt(cut, 10)), fileMode, false); err != nil {
			return err
		}
		if err := s.sweep(ctx, recs, cut); err != nil {
			return err
		}
		if size = s.size(); size <= target {
			break
		}
	}
	return nil
}

// allRecords reads the checkpoint index of every session of the directory.
func (s *Store) allRecords() ([]Record, error) {
	dirs, err := filepath.Glob(filepath.Join(store.SessionsDir(s.cwd), "*.d"))
	if err != nil {
		return nil, err
	}
	var out []Record
	for _, d := range dirs {
		recs, err := ReadIndexFile(filepath.Join(d, IndexFile))
		if err != nil {
			continue // a damaged index keeps nothing alive
		}
		out = append(out, recs...)
	}
	return out, nil
}

// sweep deletes every stored object that no checkpoint taken at or after
// cut needs (nor the base of the next snapshot).
func (s *Store) sweep(ctx context.Context, recs []Record, cut int64) error {
	live := map[string]bool{}
	var trees []string
	for _, r := range recs {
		if r.At < cut {
			continue
		}
		for _, f := range r.Files {
			live[f.Hash] = true
		}
		if r.Git != "" {
			s.markGitState(r.Git, live)
		}
		switch {
		case strings.HasPrefix(r.Tree, "plain:"):
			s.markManifest(strings.TrimPrefix(r.Tree, "plain:"), live)
		case strings.HasPrefix(r.Tree, schemeGit):
			trees = append(trees, strings.TrimPrefix(r.Tree, schemeGit))
		}
	}
	if h, err := os.ReadFile(filepath.Join(s.root, lastManifestFile)); err == nil {
		s.markManifest(strings.TrimSpace(string(h)), live)
	}
	if err := sweepDir(filepath.Join(s.root, "objects"), func(name string) bool { return live[schemeSHA+name] }); err != nil {
		return err
	}
	if err := s.sweepTx(recs, cut); err != nil { // tx.go
		return err
	}
	if s.git == nil {
		return nil
	}
	// Git objects: those reachable from live trees, those live manifests
	// name, and those the private index names (the next snapshot reuses
	// unchanged entries).
	liveGit := map[string]bool{}
	for h := range live {
		if oid, ok := strings.CutPrefix(h, schemeGit); ok {
			liveGit[oid] = true
		} else if oid, ok := strings.CutPrefix(h, gitTreeKey); ok {
			trees = append(trees, oid)
		}
	}
	if len(trees) > 0 {
		out, _, err := s.git.run(ctx, []byte(strings.Join(trees, "\n")+"\n"), "rev-list", "--objects", "--no-object-names", "--missing=allow-any", "--stdin")
		if err != nil {
			return err
		}
		for _, l := range strings.Fields(string(out)) {
			liveGit[l] = true
		}
	}
	out, _, err := s.git.run(ctx, nil, "ls-files", "-s", "-z")
	if err == nil {
		for _, rec := range bytes.Split(out, []byte{0}) {
			if f := strings.Fields(string(rec)); len(f) >= 2 {
				liveGit[f[1]] = true
			}
		}
	}
	return sweepDir(filepath.Join(s.root, "git", "objects"), func(name string) bool { return liveGit[name] })
}

// gitTreeKey marks, among the live hashes of a sweep, a git tree a live
// manifest stands on.
const gitTreeKey = "gittree:"

// markManifest marks what a live plain snapshot needs: its manifests and
// the content of its files. The chain is walked from the snapshot down:
// the first manifest naming a path holds the path's state in the
// snapshot. The chain's root (a manifest listing every file) is marked
// whole, once for all snapshots, so a sweep does not resolve every live
// snapshot to its whole list.
func (s *Store) markManifest(h string, live map[string]bool) {
	seen := map[string]bool{}
	for range maxChainWalk {
		if h == "" {
			return
		}
		m, err := s.storedManifestOf(h)
		if err != nil {
			return
		}
		live[h] = true
		if m.base == "" && m.tree == "" {
			if !live["root:"+h] {
				live["root:"+h] = true
				for _, f := range m.files {
					live[f.Hash] = true
				}
			}
			return
		}
		for p, f := range m.files {
			if !seen[p] {
				seen[p] = true
				live[f.Hash] = true
			}
		}
		for p := range m.removed {
			seen[p] = true
		}
		if m.tree != "" {
			live[gitTreeKey+m.tree] = true
		}
		h = m.base
	}
}

// sweepDir removes the loose objects (xx/yyyy...) of dir whose name
// (xxyyyy...) keep does not want.
func sweepDir(dir string, keep func(name string) bool) error {
	fans, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, fan := range fans {
		if len(fan.Name()) != 2 || !fan.IsDir() {
			continue
		}
		if _, err := hex.DecodeString(fan.Name()); err != nil {
			continue
		}
		objs, err := os.ReadDir(filepath.Join(dir, fan.Name()))
		if err != nil {
			continue
		}
		for _, o := range objs {
			if strings.HasPrefix(o.Name(), ".") || keep(fan.Name()+o.Name()) {
				continue
			}
			os.Remove(filepath.Join(dir, fan.Name(), o.Name()))
		}
	}
	return nil
}
