package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
)

// manifest is a plain snapshot: every regular file and symlink under the
// working directory with the stat data that tells the next snapshot
// whether it changed. It is stored as a blob, the record names its hash.
// To keep a snapshot of a big tree small on disk, a manifest usually
// stores only what changed since a base manifest; in memory it is always
// resolved to the full list.
type manifest struct {
	Base string `json:"base,omitempty"`
	// Depth is how many manifests stand below this one (0: it lists
	// every file, or stands on a git tree).
	Depth int `json:"depth,omitempty"`
	// Tree, in a chain's first manifest, is a git tree the chain stands
	// on (a tracked snapshot of a git work tree starts from the full git
	// snapshot); its files come before the manifest's changes.
	Tree    string         `json:"tree,omitempty"`
	Files   []manifestFile `json:"files"` // all files, or (with Base) those added or changed
	Removed []string       `json:"removed,omitempty"`
	// Taken is when the walk started (ns). A file modified less than
	// racyWindow before it may change again within the same mtime tick,
	// so the next snapshot hashes it again instead of trusting its stat.
	Taken int64 `json:"taken"`

	full   []manifestFile // resolved, sorted by path
	byPath map[string]int // index into full
}

// racyWindow covers coarse file system timestamps.
const racyWindow = int64(50 * time.Millisecond)

// maxChain bounds how many manifests a whole-tree scan stands on: past
// it, the scan (which costs the tree anyway) writes its whole list. A
// tracked snapshot adds at most log2 of the snapshots since its baseline
// (see spineEntry).
const maxChain = 256

type manifestFile struct {
	File
	Size  int64 `json:"size"`
	Mtime int64 `json:"mtime"` // nanoseconds
}

func (m *manifest) index() {
	m.byPath = make(map[string]int, len(m.full))
	for i, f := range m.full {
		m.byPath[f.Path] = i
	}
}

// delta fills m's stored form from its full list: the changes since prev
// (the manifest stored as prevHash), or everything.
func (m *manifest) delta(prev *manifest, prevHash string) {
	if prev == nil || prevHash == "" || prev.Depth >= maxChain {
		m.Base, m.Depth, m.Files, m.Removed = "", 0, m.full, nil
		return
	}
	m.Base, m.Depth, m.Files, m.Removed = prevHash, prev.Depth+1, nil, nil
	for _, f := range m.full {
		if i, ok := prev.byPath[f.Path]; !ok || prev.full[i] != f {
			m.Files = append(m.Files, f)
		}
	}
	for _, f := range prev.full {
		if _, ok := m.byPath[f.Path]; !ok {
			m.Removed = append(m.Removed, f.Path)
		}
	}
}

// lastManifestFile names the manifest of the newest plain snapshot, the
// base of the next incremental one.
const lastManifestFile = "plain-last"

// plainSnapshot walks the working directory and stores every file whose
// size, mtime or mode changed since the previous snapshot. It returns the
// manifest's hash and the bytes added.
func (s *Store) plainSnapshot(ctx context.Context) (string, int64, error) {
	prev, prevHash := s.last, s.lastHash
	if prev == nil {
		prev, prevHash = s.loadLastManifest()
	}
	if s.tooBig != "" {
		// Walking it again before every command would cost as much.
		return "", 0, errors.New(s.tooBig)
	}
	w := &plainWalk{s: s, ctx: ctx, prev: prev, m: &manifest{Taken: time.Now().UnixNano()}}
	if err := filepath.WalkDir(s.cwd, w.visit); err != nil {
		return "", w.added, err
	}
	h, n, err := s.savePlainManifest(w.m, prev, prevHash)
	added := w.added + n
	if err != nil {
		return "", added, err
	}
	return h, added, nil
}

// plainWalk is one walk of plainSnapshot: the manifest it fills and the
// bytes it stored, so each step of the walk can be a method of its own.
type plainWalk struct {
	s     *Store
	ctx   context.Context
	prev  *manifest // the previous snapshot's manifest (nil: none)
	m     *manifest
	added int64
}

// visit is the WalkDir callback: it keeps what is content and leaves out
// the store, .git and what is not a file, and stops at the file limit.
func (w *plainWalk) visit(path string, d fs.DirEntry, err error) error {
	if w.ctx.Err() != nil {
		return w.ctx.Err()
	}
	rel, _ := filepath.Rel(w.s.cwd, path)
	rel = filepath.ToSlash(rel)
	if err != nil {
		return w.unreadable(rel, d, err)
	}
	if d.IsDir() {
		if rel == stateDirName || d.Name() == ".git" {
			return fs.SkipDir
		}
		return nil
	}
	if !d.Type().IsRegular() && d.Type()&fs.ModeSymlink == 0 {
		return nil // sockets, fifos, devices are not content
	}
	if len(w.m.full) >= w.s.opts.MaxFiles {
		w.s.tooBig = fmt.Sprintf("the working directory has more than %d files; too many to snapshot without git (make it a git repository and commit the files, or start tiny-go in a smaller directory)", w.s.opts.MaxFiles)
		return errors.New(w.s.tooBig)
	}
	fi, err := d.Info()
	if err != nil {
		return nil // vanished while walking
	}
	return w.file(path, rel, fi)
}

// unreadable records a path the walk could not read, so a rewind names
// it; only an unreadable working directory fails the snapshot.
func (w *plainWalk) unreadable(rel string, d fs.DirEntry, err error) error {
	if rel == "." {
		return err
	}
	w.m.full = append(w.m.full, manifestFile{File: File{Path: rel, Missing: "unreadable: " + rootCause(err)}})
	if d != nil && d.IsDir() {
		return fs.SkipDir
	}
	return nil
}

// file adds one file to the manifest, reading and storing its content
// only when its stat data says it may have changed.
func (w *plainWalk) file(path, rel string, fi fs.FileInfo) error {
	mf := manifestFile{File: File{Path: rel, Mode: uint32(fi.Mode().Perm()), Link: fi.Mode()&fs.ModeSymlink != 0}, Size: fi.Size(), Mtime: fi.ModTime().UnixNano()}
	if w.unchanged(&mf) {
		w.m.full = append(w.m.full, mf)
		return nil
	}
	data, err := w.read(path, mf)
	switch {
	case errors.Is(err, errTooLarge):
		mf.Missing = fmt.Sprintf("larger than %s", formatBytes(w.s.opts.MaxFileSize))
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		mf.Missing = "unreadable: " + rootCause(err)
	default:
		if mf.Hash, err = w.keep(rel, data); err != nil {
			return err
		}
	}
	w.m.full = append(w.m.full, mf)
	return nil
}

// unchanged reports whether the previous snapshot has mf with the same
// stat data, taken long enough after its mtime to trust it, and then
// takes its hash: the file need not be read again.
func (w *plainWalk) unchanged(mf *manifestFile) bool {
	if w.prev == nil {
		return false
	}
	i, ok := w.prev.byPath[mf.Path]
	if !ok {
		return false
	}
	p := w.prev.full[i]
	if p.Size == mf.Size && p.Mtime == mf.Mtime && p.Mode == mf.Mode && p.Link == mf.Link && p.Missing == "" && p.Mtime < w.prev.Taken-racyWindow {
		mf.Hash = p.Hash
		return true
	}
	return false
}

// read is a file's content: a symlink's target, or a regular file's bytes
// up to the size limit.
func (w *plainWalk) read(path string, mf manifestFile) ([]byte, error) {
	if mf.Link {
		target, err := os.Readlink(path)
		return []byte(target), err
	}
	if mf.Size > w.s.opts.MaxFileSize {
		return nil, errTooLarge
	}
	return readCapped(path, w.s.opts.MaxFileSize)
}

// keep stores changed content and returns its hash, failing the snapshot
// once the changes pass half the store's cap.
func (w *plainWalk) keep(rel string, data []byte) (string, error) {
	if w.added+int64(len(data)) > w.s.opts.Cap/2 {
		return "", fmt.Errorf("the changed files take more than half the checkpoint store's cap (%s; raise TINY_CHECKPOINT_CAP)", formatBytes(w.s.opts.Cap))
	}
	h, n, err := w.s.putBlob(data)
	if err != nil {
		return "", fmt.Errorf("store %s: %w", rel, err)
	}
	w.added += n
	return h, nil
}

// savePlainManifest stores m (as its changes against prev) and makes it
// the base of the next snapshot, of this process and of the next one. n
// is the bytes stored, even when recording it as the base failed.
func (s *Store) savePlainManifest(m, prev *manifest, prevHash string) (h string, n int64, err error) {
	slices.SortFunc(m.full, func(a, b manifestFile) int { return strings.Compare(a.Path, b.Path) })
	m.index()
	m.delta(prev, prevHash)
	data, err := json.Marshal(m)
	if err != nil {
		return "", 0, err
	}
	h, n, err = s.putBlob(data)
	if err != nil {
		return "", 0, err
	}
	s.last, s.lastHash = m, h
	if err := writeAtomic(filepath.Join(s.root, lastManifestFile), []byte(h), fileMode, false); err != nil {
		return "", n, err
	}
	return h, n, nil
}

// loadLastManifest reads the manifest of the newest snapshot of any process;
// nil when there is none or it cannot be read (the next snapshot then
// hashes every file).
func (s *Store) loadLastManifest() (*manifest, string) {
	h, err := os.ReadFile(filepath.Join(s.root, lastManifestFile))
	if err != nil {
		return nil, ""
	}
	hash := strings.TrimSpace(string(h))
	m, err := s.readManifest(hash)
	if err != nil {
		return nil, ""
	}
	return m, hash
}

// readManifest loads a manifest resolved to its full list: the chain of
// stored manifests back to a full one is read, then the changes are
// applied forward. Only the requested result is cached (a chain's
// intermediate lists would multiply the memory).
func (s *Store) readManifest(h string) (*manifest, error) {
	if m, ok := s.manifests.Load(h); ok {
		return m.(*manifest), nil
	}
	var chain []*manifest
	var cached *manifest // a resolved manifest the chain stands on
	for next := h; ; {
		if len(chain) > maxChainWalk {
			return nil, fmt.Errorf("manifest %s: chain too long", h)
		}
		if c, ok := s.manifests.Load(next); ok && next != h {
			// A rewind resolves the records of one turn, each a few
			// changes on the previous: start from the one resolved.
			cached = c.(*manifest)
			break
		}
		data, err := s.readBlob(next)
		if err != nil {
			return nil, err
		}
		var m manifest
		if err := json.Unmarshal(data, &m); err != nil {
			return nil, fmt.Errorf("manifest %s: %w", next, err)
		}
		chain = append(chain, &m)
		if m.Base == "" {
			break
		}
		next = m.Base
	}
	byPath := make(map[string]manifestFile, len(chain[len(chain)-1].Files))
	if cached != nil {
		for _, f := range cached.full {
			byPath[f.Path] = f
		}
	} else if tree := chain[len(chain)-1].Tree; tree != "" {
		if s.git == nil {
			return nil, fmt.Errorf("manifest %s stands on a git tree; %s is not a git work tree now", h, s.cwd)
		}
		files, err := s.treeFiles(schemeGit + tree)
		if err != nil {
			return nil, err
		}
		for p, f := range files {
			byPath[p] = manifestFile{File: f}
		}
	}
	for i := len(chain) - 1; i >= 0; i-- {
		for _, p := range chain[i].Removed {
			delete(byPath, p)
		}
		for _, f := range chain[i].Files {
			byPath[f.Path] = f
		}
	}
	m := chain[0]
	m.full = make([]manifestFile, 0, len(byPath))
	for _, f := range byPath {
		m.full = append(m.full, f)
	}
	slices.SortFunc(m.full, func(a, b manifestFile) int { return strings.Compare(a.Path, b.Path) })
	m.index()
	s.manifests.Store(h, m)
	return m, nil
}

// rootCause is the innermost error text (no "open /x/y:" prefix).
func rootCause(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// formatBytes is a byte count for people.
func formatBytes(n int64) string {
	switch {
	case n < 1024:
		return fmt.Sprintf("%d B", n)
	case n < 1024*1024:
		return fmt.Sprintf("%.1f KiB", float64(n)/1024)
	case n < 1024*1024*1024:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1024*1024))
	}
	return fmt.Sprintf("%.1f GiB", float64(n)/(1024*1024*1024))
}
