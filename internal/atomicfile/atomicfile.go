// Package atomicfile writes a file so that a reader, or a crash, finds
// its old content or its new one, never a part: the data goes to a
// temporary file beside it (".<name>.tiny-tmp-*", the name the
// checkpoint store knows as its own leftover), which is renamed over it.
//
// It works by path. What must be written beneath a directory without
// following symbolic links (the session store's sidecars, a rewind's
// puts) keeps its own openat-based writes.
package atomicfile

import (
	"io/fs"
	"os"
	"path/filepath"
)

// TempInfix marks the temporary files of Write: ".<name>" + TempInfix + a
// random suffix.
const TempInfix = ".tiny-tmp-"

// Options say how Write writes.
type Options struct {
	// Perm is the file's mode; 0 keeps the temporary file's, 0600.
	Perm fs.FileMode
	// Sync makes the write durable before Write returns: the file is
	// synced before the rename, its directory after it.
	Sync bool
	// DirPerm, when not 0, creates the missing parent directories with
	// that mode.
	DirPerm fs.FileMode
}

// Write replaces path's content with data, atomically.
func Write(path string, data []byte, o Options) error {
	dir := filepath.Dir(path)
	if o.DirPerm != 0 {
		if err := os.MkdirAll(dir, o.DirPerm); err != nil {
			return err
		}
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+TempInfix+"*")
	if err != nil {
		return err
	}
	name := tmp.Name()
	_, err = tmp.Write(data)
	// The mode after the data: a write by its owner would clear a
	// setuid or setgid bit set before.
	if err == nil && o.Perm != 0 {
		err = tmp.Chmod(o.Perm)
	}
	if err == nil && o.Sync {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(name, path)
	}
	if err != nil {
		os.Remove(name)
		return err
	}
	if o.Sync {
		return SyncDir(dir)
	}
	return nil
}

// SyncDir makes the entries of dir (a rename into it) durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
