package fleet

import (
	"archive/tar"
	"bytes"
	"cmp"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// packDir archives dir (files, folders, symbolic links, modes) as a
// gzipped tar, leaving out the paths skip reports.
func packDir(dir string, skip func(rel string) bool) ([]byte, error) {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	tw := tar.NewWriter(zw)
	// A file removed while we walk (the agent is running) is simply not
	// in the snapshot.
	err := walkRel(dir, skip, func(path, rel string, d fs.DirEntry) error {
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
//
// Small files are written by a few goroutines while the archive is read:
// a cold worker's base is 20,000 files, and creating them is nearly all
// of unpacking (the kernel's work, which several threads share out
// better on a busy machine). Folders and links are made in archive
// order, before anything goes below them.
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
	w := newFileWriters(root, unpackWriters)
	err = unpackEntries(tar.NewReader(zr), root, w)
	if werr := w.wait(); err == nil {
		err = werr
	}
	return err
}

// unpackWriters is how many goroutines create files.
const unpackWriters = 4

// unpackEntries makes each entry of tr under root, handing small files
// to w.
func unpackEntries(tr *tar.Reader, root *os.Root, w *fileWriters) error {
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
			// A link is made once the files before it are, so that no
			// file goes through a link the archive made later.
			if err = w.wait(); err == nil {
				err = root.Symlink(hdr.Linkname, name)
			}
			w.restart()
		case tar.TypeReg:
			if hdr.Size > smallFile {
				err = writeRootFile(root, name, mode, tr)
				break
			}
			body := make([]byte, hdr.Size)
			if _, err = io.ReadFull(tr, body); err == nil {
				err = w.write(name, mode, body)
			}
		}
		if err != nil {
			return fmt.Errorf("snapshot: %w", err)
		}
	}
}

// smallFile is the biggest file handed to a writer goroutine (held in
// memory meanwhile); a bigger one is streamed where it is read.
const smallFile = 1 << 20

func writeRootFile(root *os.Root, name string, mode os.FileMode, r io.Reader) error {
	f, err := root.OpenFile(name, os.O_CREATE|os.O_EXCL|os.O_WRONLY, mode)
	if err != nil {
		return err
	}
	_, err = io.Copy(f, r)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// fileWriters create files from a few goroutines; the first error stops
// them.
type fileWriters struct {
	root *os.Root
	n    int
	jobs chan fileJob
	wg   sync.WaitGroup
	mu   sync.Mutex
	err  error
}

type fileJob struct {
	name string
	mode os.FileMode
	body []byte
}

func newFileWriters(root *os.Root, n int) *fileWriters {
	w := &fileWriters{root: root, n: n}
	w.restart()
	return w
}

// restart starts the goroutines (again, after wait).
func (w *fileWriters) restart() {
	w.jobs = make(chan fileJob, 64)
	for range w.n {
		w.wg.Go(func() {
			for j := range w.jobs {
				if w.failed() != nil {
					continue
				}
				if err := writeRootFile(w.root, j.name, j.mode, bytes.NewReader(j.body)); err != nil {
					w.mu.Lock()
					w.err = cmp.Or(w.err, err)
					w.mu.Unlock()
				}
			}
		})
	}
}

func (w *fileWriters) failed() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// write hands a file to the goroutines; an error is an earlier file's.
func (w *fileWriters) write(name string, mode os.FileMode, body []byte) error {
	if err := w.failed(); err != nil {
		return err
	}
	w.jobs <- fileJob{name: name, mode: mode, body: body}
	return nil
}

// wait lets the goroutines finish what they have and end.
func (w *fileWriters) wait() error {
	close(w.jobs)
	w.wg.Wait()
	return w.failed()
}
