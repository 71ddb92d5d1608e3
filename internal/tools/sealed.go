package tools

import (
	"os"
	"slices"
	"strings"

	"github.com/tiny-agent/tiny-go/internal/sandbox"
)

// Sealed runs the bash commands a review shows (--approval review) where
// nothing they do outlives a "no": the tree is the transaction's overlay,
// the network is off, nothing else is writable, and the temporary
// directory is the command's own, removed when it ends.
type Sealed struct {
	// Sandbox leaves only the tree and Scratch writable, network off.
	Sandbox *sandbox.Sandbox
	// Scratch is where each command gets its temporary directory.
	Scratch string
	// Env are variables set for sealed commands (caches in Scratch).
	Env []string
	// Unsealed are the commands that need more than that (the network,
	// the rest of the system): the approval gate asks about them before
	// they run, as in ask mode, and they run as everywhere else.
	Unsealed func(command string) bool
}

// sealedNote heads the preview of a sealed command's changes.
const sealedNote = "(ran sealed: network off, nothing outside the project writable; nothing is kept unless you apply it)"

// seal is the sandbox and environment command runs with, and a func
// that removes what it left in its temporary directory; sealed is false
// for a command that runs as everywhere else.
func (t bashTool) seal(command string) (sb *sandbox.Sandbox, env []string, done func(), sealed bool, err error) {
	if t.sealed == nil || t.sealed.Unsealed(command) {
		return t.sandbox, t.env, func() {}, false, nil
	}
	tmp, err := os.MkdirTemp(t.sealed.Scratch, "cmd-")
	if err != nil {
		return nil, nil, nil, false, err
	}
	base := t.env
	if base == nil {
		base = os.Environ()
	}
	env = WithEnv(base, append([]string{"TMPDIR=" + tmp}, t.sealed.Env...)...)
	return t.sealed.Sandbox, env, func() { _ = os.RemoveAll(tmp) }, true, nil
}

// WithEnv is env with the variables of set (NAME=value) in place of its
// own of those names.
func WithEnv(env []string, set ...string) []string {
	out := make([]string, 0, len(env)+len(set))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.ContainsFunc(set, func(s string) bool { return strings.HasPrefix(s, name+"=") }) {
			out = append(out, kv)
		}
	}
	return append(out, set...)
}
