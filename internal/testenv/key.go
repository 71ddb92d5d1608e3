package testenv

import (
	"os"
	"strings"

	"github.com/tiny-agent/tiny-go/internal/statekey"
)

// A test binary that imports testenv keeps its state key (and the marks
// of the sessions it seals) in a folder of its own, not in the user's
// ~/.local/state/tiny-go: local runs and CI then never share, or wear,
// each other's key. The children it starts inherit the variable; a child
// started with an environment of its own keeps its HOME's key. A folder
// set beforehand (scripts, the user) is kept.
func init() {
	if os.Getenv(statekey.EnvDir) != "" || !strings.HasSuffix(os.Args[0], ".test") {
		return
	}
	dir, err := os.MkdirTemp("", "tiny-go-key-")
	if err != nil {
		panic("testenv: a folder for the tests' state key: " + err.Error())
	}
	os.Setenv(statekey.EnvDir, dir)
}
