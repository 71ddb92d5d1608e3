// Package checkpointtest helps tests compare working trees before and
// after a rewind.
package checkpointtest

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// TreeDigests is every file under dir but .tiny-agent and .git (a
// directory of that name anywhere), by slash path, with a digest of its
// kind (file or symlink), executable bit and content.
func TreeDigests(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if d.IsDir() {
			if rel == ".tiny-agent" || d.Name() == ".git" {
				return fs.SkipDir
			}
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		var data []byte
		if fi.Mode()&fs.ModeSymlink != 0 {
			s, _ := os.Readlink(path)
			data = []byte("symlink:" + s)
		} else if data, err = os.ReadFile(path); err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		out[filepath.ToSlash(rel)] = hex.EncodeToString(sum[:8]) + strconv.FormatBool(fi.Mode()&0o111 != 0)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Listing is every entry below dir but .tiny-agent, .git included, by
// its path relative to dir: its mode, and its link target or a digest
// of its content. Two listings are equal when the trees are the same to
// a byte, a mode and a link.
func Listing(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if rel == ".tiny-agent" {
			return filepath.SkipDir
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		v := fi.Mode().String()
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			v += " -> " + target
		case fi.Mode().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(data)
			v += " " + hex.EncodeToString(sum[:])
		}
		out[rel] = v
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Sh runs script with sh in dir, with a fixed git author and committer;
// the test fails on a non-zero exit, with the script's output.
func Sh(t testing.TB, dir, script string) {
	t.Helper()
	cmd := exec.Command("sh", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", script, err, out)
	}
}
