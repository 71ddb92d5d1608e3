package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// sandboxExec applies a Seatbelt profile and executes the command, which
// keeps its pid. The absolute path: a sandbox-exec earlier in PATH must not
// decide what confines commands.
const sandboxExec = "/usr/bin/sandbox-exec"

// ABI stands for Landlock's version in the portable code: 4 (writes and
// the network can be restricted) where sandbox-exec exists, else 0.
func ABI() int {
	if _, err := os.Stat(sandboxExec); err != nil {
		return 0
	}
	return 4
}

// spawner starts commands under sandbox-exec with the profile of the
// Sandbox. The file tools need no thread of their own: CheckWrite is
// what holds them to the roots on macOS.
type spawner struct {
	confined *thread
	cont     *containment
	profile  string
}

// thread runs requests on the calling goroutine.
type thread struct{}

// spawnRequest is a command to start, or a function to run.
type spawnRequest struct {
	cmd *exec.Cmd
	fn  func() error
}

func (t *thread) do(r spawnRequest) error {
	if r.fn != nil {
		return r.fn()
	}
	return r.cmd.Start()
}

// newSpawner writes the profile: writes limited to roots (but .tiny-agent)
// when fs is set, the network denied when net is set.
func newSpawner(fs bool, roots []string, net bool, cont *containment) (*spawner, error) {
	p := seatbeltPolicy{Writable: roots, AllWrites: !fs, NetworkOff: net}
	if cont != nil && cont.stateDir != "" {
		p.ReadOnly = []string{cont.stateDir}
		cont.threadRO = true
	}
	if cont != nil && cont.keyDir != "" {
		// Seatbelt sees paths with their symlinks resolved.
		if dir, err := filepath.EvalSymlinks(cont.keyDir); err == nil {
			p.Hidden = []string{dir}
		}
	}
	profile, err := seatbeltProfile(p)
	if err != nil {
		return nil, err
	}
	return &spawner{confined: &thread{}, cont: cont, profile: profile}, nil
}

// start runs cmd as `sandbox-exec -p <profile> -- <path> <args...>`.
func (s *spawner) start(cmd *exec.Cmd) error {
	if cmd.Err != nil || cmd.Path == "" {
		return cmd.Start() // the lookup's error, as exec.Cmd reports it
	}
	if len(cmd.Args) == 0 {
		cmd.Args = []string{cmd.Path}
	}
	args := append([]string{sandboxExec, "-p", s.profile, "--", cmd.Path}, cmd.Args[1:]...)
	cmd.Path, cmd.Args = sandboxExec, args
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("sandbox-exec: %w", err)
	}
	return nil
}

func (s *spawner) close() {}
