package mcp

import (
	"os"
	"path/filepath"

	"github.com/tiny-agent/tiny-go/internal/store"
)

// openNoFollow opens path (0600 when created) without following a symlink;
// only a regular file is opened.
func openNoFollow(path string, flag int) (*os.File, error) {
	return store.OpenSidecarFile(filepath.Dir(path), filepath.Base(path), flag)
}
