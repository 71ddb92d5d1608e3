package sandbox

import (
	"os"
	"strings"

	"github.com/tiny-agent/tiny-go/internal/sandbox/nsinit"
)

// hiding is what the containment hides from commands.
type hiding struct {
	hidden func() []string
	// keyDir is the folder of tiny-go's state key (internal/statekey),
	// hidden from every command: a command runs as the user who owns the
	// key, and with it could seal forged state. "" when it cannot be
	// hidden (it holds the working directory).
	keyDir string
}

// hideThrough is the environment that makes the init (static or Go,
// both know nsinit.HideEnv and take it out of the command's
// environment) hide the key's folder and the paths hidden returns
// (Policy.Hidden) from the command. A path with a newline cannot be
// named and is left out.
func (c *containment) hideThrough(cmdEnv []string) (env []string, ok bool) {
	var paths []string
	if c.keyDir != "" {
		paths = append(paths, c.keyDir)
	}
	if c.hidden != nil {
		for _, p := range c.hidden() {
			if p != "" && !strings.Contains(p, "\n") {
				paths = append(paths, p)
			}
		}
	}
	if len(paths) == 0 {
		return nil, false
	}
	if cmdEnv == nil {
		cmdEnv = os.Environ()
	}
	env = append(append([]string(nil), cmdEnv...), nsinit.HideEnv+"="+strings.Join(paths, "\n"))
	return env, true
}

// Hides reports whether commands start where Policy.Hidden's paths (and
// tiny-go's state key) can be hidden from them (namespaces); elsewhere
// they can read them.
func (s *Sandbox) Hides() bool { return s.Namespaced() }
