package fleet

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// packDir archives dir (files, folders, symbolic links, modes) as a
// gzipped tar, leaving out the paths skip reports.
func packDir(dir string, skip func(rel string) bool) ([]byte, error) {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	tw := tar.NewWriter(zw)
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			// A file removed while we walk (the agent is running) is
			// simply not in the snapshot.
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil || rel == "." {
			return err
		}
		rel = filepath.ToSlash(rel)
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
		link := ""
		if info.Mode()&os.ModeSymlink != 0 {
			if link, err = os.Readlink(path); err != nil {
				return err
			}
		} else if !info.Mode().IsRegular() && !info.IsDir() {
			return nil // sockets, fifos: nothing to restore
		}
		hdr, err := tar.FileInfoHeader(info, link)
		if err != nil {
			return err
		}
		hdr.Name = rel
		if info.IsDir() {
			hdr.Name += "/"
		}
		if !info.Mode().IsRegular() {
			return tw.WriteHeader(hdr)
		}
		data, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		} else if err != nil {
			return err
		}
		hdr.Size = int64(len(data))
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		_, err = tw.Write(data)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("snapshot %s: %w", dir, err)
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// unpackDir extracts an archive of packDir into dir, which must be empty
// or absent. Nothing is written outside dir: names that leave it, and
// paths through symbolic links that leave it, are refused (os.Root).
func unpackDir(data []byte, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	tr := tar.NewReader(zr)
	made := map[string]bool{}
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("snapshot: %w", err)
		}
		name := filepath.FromSlash(strings.TrimSuffix(hdr.Name, "/"))
		if !filepath.IsLocal(name) {
			return fmt.Errorf("snapshot: %q leaves the workspace", hdr.Name)
		}
		mode := os.FileMode(hdr.Mode).Perm()
		// packDir writes a folder before what is in it: a parent made
		// already is not made again (through os.Root each MkdirAll costs
		// a syscall per path component; 20,000 files took seconds).
		if parent := filepath.Dir(name); parent != "." && !made[parent] {
			if err := root.MkdirAll(parent, 0o755); err != nil {
				return fmt.Errorf("snapshot: %w", err)
			}
			made[parent] = true
		}
		switch hdr.Typeflag {
		case tar.TypeDir:
			err = root.MkdirAll(name, mode|0o700)
			made[name] = err == nil
		case tar.TypeSymlink:
			err = root.Symlink(hdr.Linkname, name)
		case tar.TypeReg:
			var f *os.File
			if f, err = root.OpenFile(name, os.O_CREATE|os.O_EXCL|os.O_WRONLY, mode); err == nil {
				_, err = io.Copy(f, tr)
				if cerr := f.Close(); err == nil {
					err = cerr
				}
			}
		}
		if err != nil {
			return fmt.Errorf("snapshot: %w", err)
		}
	}
}
