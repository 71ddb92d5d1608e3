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

	"github.com/go-json-experiment/json"
)

// manifest is a plain snapshot: every regular file and symlink under the
// working directory with the stat data that tells the next snapshot
// whether it changed. It is stored as a blob; the record names its hash.
type manifest struct {
	Files []manifestFile `json:"files"`

	byPath map[string]int
}

type manifestFile struct {
	File
	Size  int64 `json:"size"`
	Mtime int64 `json:"mtime"` // nanoseconds
}

func (m *manifest) index() {
	m.byPath = make(map[string]int, len(m.Files))
	for i, f := range m.Files {
		m.byPath[f.Path] = i
	}
}

// lastManifestFile names the manifest of the newest plain snapshot, the
// base of the next incremental one.
const lastManifestFile = "plain-last"

// plainSnapshot walks the working directory and stores every file whose
// size, mtime or mode changed since the previous snapshot. It returns the
// manifest's hash and the bytes added.
func (s *Store) plainSnapshot(ctx context.Context) (string, int64, error) {
	prev := s.last
	if prev == nil {
		prev = s.loadLastManifest()
	}
	var added int64
	m := &manifest{}
	err := filepath.WalkDir(s.cwd, func(path string, d fs.DirEntry, err error) error {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		rel, _ := filepath.Rel(s.cwd, path)
		rel = filepath.ToSlash(rel)
		if err != nil {
			if rel != "." {
				m.Files = append(m.Files, manifestFile{File: File{Path: rel, Missing: "unreadable: " + rootCause(err)}})
				if d != nil && d.IsDir() {
					return fs.SkipDir
				}
				return nil
			}
			return err
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
		fi, err := d.Info()
		if err != nil {
			return nil // vanished while walking
		}
		mf := manifestFile{File: File{Path: rel, Mode: uint32(fi.Mode().Perm()), Link: fi.Mode()&fs.ModeSymlink != 0}, Size: fi.Size(), Mtime: fi.ModTime().UnixNano()}
		if prev != nil {
			if i, ok := prev.byPath[rel]; ok {
				p := prev.Files[i]
				if p.Size == mf.Size && p.Mtime == mf.Mtime && p.Mode == mf.Mode && p.Link == mf.Link && p.Missing == "" {
					mf.Hash = p.Hash
					m.Files = append(m.Files, mf)
					return nil
				}
			}
		}
		var data []byte
		if mf.Link {
			target, rerr := os.Readlink(path)
			data, err = []byte(target), rerr
		} else if mf.Size > s.opts.MaxFileSize {
			err = errTooLarge
		} else {
			data, err = readCapped(path, s.opts.MaxFileSize)
		}
		switch {
		case errors.Is(err, errTooLarge):
			mf.Missing = fmt.Sprintf("larger than %s", formatBytes(s.opts.MaxFileSize))
		case errors.Is(err, fs.ErrNotExist):
			return nil
		case err != nil:
			mf.Missing = "unreadable: " + rootCause(err)
		default:
			h, n, err := s.putBlob(data)
			if err != nil {
				return fmt.Errorf("store %s: %w", rel, err)
			}
			mf.Hash = h
			added += n
		}
		m.Files = append(m.Files, mf)
		return nil
	})
	if err != nil {
		return "", added, err
	}
	slices.SortFunc(m.Files, func(a, b manifestFile) int { return strings.Compare(a.Path, b.Path) })
	data, err := json.Marshal(m)
	if err != nil {
		return "", added, err
	}
	h, n, err := s.putBlob(data)
	if err != nil {
		return "", added, err
	}
	added += n
	m.index()
	s.last = m
	if err := writeAtomic(filepath.Join(s.root, lastManifestFile), []byte(h), fileMode, false); err != nil {
		return "", added, err
	}
	return h, added, nil
}

// loadLastManifest reads the manifest of the newest snapshot of any process;
// nil when there is none or it cannot be read (the next snapshot then
// hashes every file).
func (s *Store) loadLastManifest() *manifest {
	h, err := os.ReadFile(filepath.Join(s.root, lastManifestFile))
	if err != nil {
		return nil
	}
	m, err := s.readManifest(strings.TrimSpace(string(h)))
	if err != nil {
		return nil
	}
	return m
}

func (s *Store) readManifest(h string) (*manifest, error) {
	data, err := s.readBlob(h)
	if err != nil {
		return nil, err
	}
	var m manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("manifest %s: %w", h, err)
	}
	m.index()
	return &m, nil
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
