package sandbox

import (
	"os"
	"strings"

	"github.com/tiny-agent/tiny-go/internal/sandbox/nsinit"
)

// hiding is what the containment hides from commands.
type hiding struct {
	hidden func() []string
}

// hideThrough makes cmd, already wrapped to start through the init, hide
// the paths hidden returns (Policy.Hidden): only the Go init knows how,
// so the command starts through tiny-go's own binary then, and the list
// travels in nsinit.HideEnv, which the init takes out of the command's
// environment. A path with a newline cannot be named and is left out.
func (c *containment) hideThrough(cmdEnv []string) (initPath string, env []string, ok bool) {
	if c.hidden == nil {
		return "", nil, false
	}
	var paths []string
	for _, p := range c.hidden() {
		if p != "" && !strings.Contains(p, "\n") {
			paths = append(paths, p)
		}
	}
	if len(paths) == 0 {
		return "", nil, false
	}
	if cmdEnv == nil {
		cmdEnv = os.Environ()
	}
	env = append(append([]string(nil), cmdEnv...), nsinit.HideEnv+"="+strings.Join(paths, "\n"))
	return "/proc/self/exe", env, true
}

// Hides reports whether commands start where Policy.Hidden's paths can
// be hidden from them (namespaces); elsewhere they can read them.
func (s *Sandbox) Hides() bool { return s.Namespaced() }
