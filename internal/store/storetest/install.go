// Package storetest sets up session directories for the tests and
// benchmarks of the packages that open sessions.
package storetest

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tiny-agent/tiny-go/internal/session/sessiontest"
	"github.com/tiny-agent/tiny-go/internal/store"
)

// InstallSession puts (a hard link to, or a copy of) the session file
// src into the sessions directory of a new working directory, under the
// name the store gives it.
func InstallSession(tb testing.TB, src string) (cwd, id string) {
	h := sessiontest.Header(tb, src)
	cwd = tb.TempDir()
	dir := store.SessionsDir(cwd)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		tb.Fatal(err)
	}
	dst := filepath.Join(dir, store.FileName(time.UnixMilli(h.CreatedAt), h.ID))
	if err := os.Link(src, dst); err != nil {
		data, err := os.ReadFile(src)
		if err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(dst, data, 0o600); err != nil {
			tb.Fatal(err)
		}
	}
	return cwd, h.ID
}
