package overlay

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/aymanbagabas/go-udiff"
)

// previewMax bounds the content a preview diffs, per file.
const previewMax = 256 << 10

// Preview describes changes for a review: one line per added, changed or
// deleted path, with a unified diff of text files.
func (t *Tx) Preview(changes []Change) []string {
	var out []string
	for _, c := range changes {
		switch c.Kind {
		case Chmod:
			out = append(out, fmt.Sprintf("mode      %s %04o -> %04o", c.Path, c.Old&0o7777, c.Mode&0o7777))
		case Delete:
			out = append(out, "deleted   "+c.Path+entriesOf(t.treePath(c.lower())))
		case Rename:
			out = append(out, "renamed   "+c.From+" -> "+c.Path+entriesOf(t.treePath(c.From)))
		case Put:
			verb := "added     "
			if c.Had {
				verb = "changed   "
			}
			out = append(out, verb+c.Path+entriesOf(t.upperPath(c.Path)))
			out = append(out, t.diff(c)...)
		}
	}
	return out
}

// entriesOf is " (a directory of n entries)" for a directory, " -> target"
// for a symlink.
func entriesOf(p string) string {
	fi, err := os.Lstat(p)
	switch {
	case err != nil:
		return ""
	case fi.Mode()&fs.ModeSymlink != 0:
		target, _ := os.Readlink(p)
		return " -> " + target
	case !fi.IsDir():
		return ""
	}
	n := 0
	filepath.WalkDir(p, func(string, fs.DirEntry, error) error { n++; return nil })
	return fmt.Sprintf(" (a directory of %d entries)", n-1)
}

// diff is the unified diff of a changed or added text file.
func (t *Tx) diff(c Change) []string {
	newText, ok := readText(t.upperPath(c.Path))
	if !ok {
		return nil
	}
	from, oldText := "/dev/null", ""
	if c.Had {
		if oldText, ok = readText(t.treePath(c.lower())); !ok {
			return nil
		}
		from = "a/" + c.Path
	}
	d := udiff.Unified(from, "b/"+c.Path, oldText, newText)
	if d == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(d, "\n"), "\n")
}

// readText is a regular file's content when it is small, valid UTF-8.
func readText(p string) (string, bool) {
	fi, err := os.Lstat(p)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > previewMax {
		return "", false
	}
	data, err := os.ReadFile(p)
	if err != nil || !utf8.Valid(data) {
		return "", false
	}
	return string(data), true
}
