package store

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/statekey"
)

// TestMain keeps the tests' key, and the marks of the sessions they seal,
// out of the user's own state directory.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "tiny-go-key-")
	if err != nil {
		panic(err)
	}
	os.Setenv(statekey.EnvDir, dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func statekeyMarked(path string) ([]byte, bool, string) {
	return statekey.Marked(sealedKind, filepath.Base(path))
}
