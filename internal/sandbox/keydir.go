package sandbox

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/tiny-agent/tiny-go/internal/statekey"
)

// keyDirToHide is the state key's folder, made when missing so that the
// key tiny-go creates later is hidden from commands started before; ""
// where it cannot be hidden without hiding workDir.
func keyDirToHide(workDir string) string {
	dir, err := statekey.Dir()
	if err != nil || os.MkdirAll(dir, 0o700) != nil {
		return ""
	}
	if rel, err := filepath.Rel(dir, workDir); err == nil && (rel == "." || !strings.HasPrefix(rel, "..")) {
		return ""
	}
	return dir
}
