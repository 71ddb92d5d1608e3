package tools

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/tiny-agent/tiny-go/internal/atomicfile"
)

// resolvePath makes path absolute against the working directory. Absolute
// paths and symlinks are allowed; the sandbox, if any, decides where writes go.
func resolvePath(workDir, path string) string {
	if filepath.IsAbs(path) {
		return filepath.Clean(path)
	}
	return filepath.Join(workDir, path)
}

// newFileMode is the mode of a file that write creates.
const newFileMode fs.FileMode = 0o644

// writeFileAtomic replaces the file at abs with data: it writes a temporary
// file in the same directory and renames it over the target, so a reader
// sees either the old or the new content, never a torn file. An existing
// file keeps its mode; a symlink is written through (its target is
// replaced, the link stays). Parent directories are created.
func writeFileAtomic(abs string, data []byte) error {
	target := abs
	if resolved, err := filepath.EvalSymlinks(abs); err == nil {
		target = resolved
	}
	mode := newFileMode
	switch fi, err := os.Stat(target); {
	case err == nil && fi.IsDir():
		return &fs.PathError{Op: "write", Path: abs, Err: syscall.EISDIR}
	case err == nil:
		mode = fi.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	return atomicfile.Write(target, data, atomicfile.Options{Perm: mode, Sync: true, DirPerm: 0o755})
}

// describeFileError turns an error about path into one short line for the
// model, using the path as the model wrote it.
func describeFileError(path string, err error) string {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Sprintf("File not found: %s", path)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Sprintf("Permission denied: %s", path)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return fmt.Sprintf("Cannot access %s: %v", path, err)
}
