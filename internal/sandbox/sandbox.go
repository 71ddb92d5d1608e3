// Package sandbox confines the commands tiny-go runs for the model (bash,
// bg, stdio MCP servers) and the file tools (write, edit) to a set of
// writable roots, using Linux Landlock (tools.md, "Sandbox").
//
// Commands are confined by a dedicated OS thread of tiny-go that restricts
// itself with Landlock once and then does nothing but start processes: a
// process inherits the Landlock domain of the thread that forked it, and so
// does everything it starts, while every other thread of tiny-go stays
// unrestricted. Where the kernel allows namespaces, commands start instead
// from an unrestricted thread through a small init that sets up their
// namespaces and then enforces the same Landlock ruleset (contain.go).
package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/tiny-agent/tiny-go/internal/netproxy"
	"github.com/tiny-agent/tiny-go/internal/procs"
)

// Mode is a --sandbox mode.
type Mode string

// The sandbox modes of tools.md.
const (
	// Workspace allows writes under the working directory, the temporary
	// directory, the user's cache directory and each --writable root.
	Workspace Mode = "workspace"
	// ReadOnly allows writes under the temporary directory only.
	ReadOnly Mode = "read-only"
	// Off allows everything.
	Off Mode = "off"
)

// ParseMode parses a --sandbox value.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case Workspace, ReadOnly, Off:
		return m, nil
	}
	return "", fmt.Errorf("--sandbox must be workspace, read-only or off, not %q", s)
}

// Policy is what the user asked for.
type Policy struct {
	Mode Mode
	// WorkDir is the absolute working directory.
	WorkDir string
	// Writable are the extra roots of --writable (workspace mode only).
	Writable []string
	// NetworkOff blocks TCP bind and connect for commands (Landlock ABI 4
	// and later).
	NetworkOff bool
	// NetworkRules, when set (--network rules), gives each command a
	// network namespace of its own whose only way out is this proxy
	// (netrules.go). Where that cannot be done, commands get no TCP at
	// all, as with NetworkOff, and the warning says so.
	NetworkRules *netproxy.Proxy
	// Getenv looks up the environment that locates the temporary and cache
	// directories; nil means os.Getenv.
	Getenv func(string) string
	// Scratch, in read-only mode, is the one writable root instead of the
	// temporary directory, which may hold the working tree (plan mode
	// keeps the tree read-only wherever it is); a path that does not exist
	// leaves nothing writable. Sealed workspace mode has it too.
	Scratch string
	// Sealed, in workspace mode, leaves only the working directory and
	// Scratch writable: no shared temporary directory, no caches, no
	// --writable roots. With NetworkOff, what a command does stays where
	// a review can discard it (--approval review).
	Sealed bool
	// NoNamespaces starts commands without namespaces, as where the
	// kernel refuses them (tests of the fallback, and of the difference in
	// start cost; contain.go).
	NoNamespaces bool
	// Hidden, when set, lists before each command starts the paths it
	// must not see (Claude Code's Read deny rules): each existing one is
	// covered in the command's mount namespace, a file by /dev/null, a
	// directory by an empty read-only tmpfs (hide.go). The folder of
	// tiny-go's state key is always hidden so. Without namespaces nothing
	// is hidden (Hides).
	Hidden func() []string
}

// Sandbox applies a Policy. A nil *Sandbox confines nothing, so callers
// need no special case for "off".
type Sandbox struct {
	mode       Mode
	roots      []string  // cleaned, symlinks resolved, for write and edit
	abi        int       // the kernel's Landlock ABI version, 0 if none
	networkOff bool      // TCP is blocked for commands
	spawner    *spawner  // nil when commands run unconfined
	net        *netRules // --network rules in force, or nil
}

// New prepares p. Its warning, when not empty, is the one line to show the
// user (a kernel without Landlock, or without network rules when
// --network off was asked for). Commands are confined from the first Start.
func New(p Policy) (*Sandbox, string, error) { return newWithABI(p, ABI()) }

// newWithABI is New on a kernel with Landlock ABI abi (0: none).
func newWithABI(p Policy, abi int) (*Sandbox, string, error) {
	if p.Mode == "" {
		p.Mode = Workspace
	}
	if _, err := ParseMode(string(p.Mode)); err != nil {
		return nil, "", err
	}
	if !filepath.IsAbs(p.WorkDir) {
		return nil, "", fmt.Errorf("sandbox: working directory %q is not absolute", p.WorkDir)
	}
	if p.Getenv == nil {
		p.Getenv = os.Getenv
	}
	var warnings []string
	if p.NetworkRules != nil && p.Mode == Off {
		return nil, "", errors.New("--network rules needs --sandbox workspace or read-only: it runs commands in namespaces of their own")
	}
	if p.Mode == Off {
		return unconfined(p, abi)
	}
	if err := absWritable(p); err != nil {
		return nil, "", err
	}
	roots := writableRoots(p)
	s := &Sandbox{mode: p.Mode, roots: roots, abi: abi}
	if abi == 0 {
		warnings = append(warnings, fmt.Sprintf("this kernel has no Landlock: --sandbox %s applies to write and edit only; bash, bg and MCP commands can write anywhere", p.Mode))
		return s, warningLine(warnings), nil
	}
	net := p.NetworkOff && abi >= 4
	if p.NetworkOff && !net {
		warnings = append(warnings, networkWarning(abi))
	}
	cont := &containment{disabled: p.NoNamespaces, stateDir: stateDirOf(p.WorkDir), fsMask: handledFS(abi)}
	cont.keyDir = keyDirToHide(p.WorkDir) // the probe hides it too
	sp, err := newSpawner(true, roots, net, cont)
	if err != nil {
		return nil, "", fmt.Errorf("sandbox: %w", err)
	}
	if p.NetworkRules != nil {
		s.spawner = sp
		if s.net, err = s.setUpRules(p.NetworkRules); err != nil {
			// Fail closed: no TCP at all.
			sp.close()
			net = abi >= 4
			why := "--network rules: " + err.Error() + ": commands may not use TCP at all (as with --network off)"
			if !net {
				why = "--network rules: " + err.Error() + ", and " + networkWarning(abi)
			}
			warnings = append(warnings, why)
			cont = &containment{disabled: p.NoNamespaces, stateDir: cont.stateDir, fsMask: cont.fsMask}
			if sp, err = newSpawner(true, roots, net, cont); err != nil {
				return nil, "", fmt.Errorf("sandbox: %w", err)
			}
		}
	}
	if w := cont.warning(); w != "" {
		warnings = append(warnings, w)
	}
	if w := cont.filterWarning(); w != "" {
		warnings = append(warnings, w)
	}
	cont.hidden = p.Hidden
	if p.Sealed && p.NetworkOff {
		if err := cont.sealNetwork(); err != nil {
			sp.close()
			return nil, "", fmt.Errorf("sandbox: %w", err)
		}
	}
	s.spawner, s.networkOff = sp, net
	return s, warningLine(warnings), nil
}

// unconfined is --sandbox off: nothing confined, but --network off still
// keeps commands from TCP where Landlock can.
func unconfined(p Policy, abi int) (*Sandbox, string, error) {
	var warnings []string
	if p.NetworkOff && abi < 4 {
		warnings = append(warnings, networkWarning(abi))
	}
	s := &Sandbox{mode: Off, abi: abi}
	if p.NetworkOff && abi >= 4 {
		s.networkOff = true
		sp, err := newSpawner(false, nil, true, nil)
		if err != nil {
			return nil, "", err
		}
		s.spawner = sp
	}
	return s, warningLine(warnings), nil
}

// absWritable makes p's --writable roots absolute (relative to the
// working directory); each must be a directory.
func absWritable(p Policy) error {
	for i, w := range p.Writable {
		if !filepath.IsAbs(w) {
			w = filepath.Join(p.WorkDir, w)
		}
		fi, err := os.Stat(w)
		if err != nil || !fi.IsDir() {
			return fmt.Errorf("--writable %s is not a directory", p.Writable[i])
		}
		p.Writable[i] = w
	}
	return nil
}

// warningLine joins warnings into the one line shown to the user.
func warningLine(warnings []string) string {
	if len(warnings) == 0 {
		return ""
	}
	return "tiny-go: warning: " + strings.Join(warnings, "; ")
}

func networkWarning(abi int) string {
	return fmt.Sprintf("--network off needs Landlock ABI 4 or later (this kernel has %d): commands keep network access", abi)
}

// Mode returns the mode in force ("off" for a nil Sandbox).
func (s *Sandbox) Mode() Mode {
	if s == nil {
		return Off
	}
	return s.mode
}

// Roots returns the writable roots (none in off mode).
func (s *Sandbox) Roots() []string {
	if s == nil {
		return nil
	}
	return append([]string(nil), s.roots...)
}

// Namespaced reports whether commands run in PID and mount namespaces of
// their own, with their own /proc (contain.go).
func (s *Sandbox) Namespaced() bool {
	return s != nil && s.spawner != nil && s.spawner.cont != nil && s.spawner.cont.ns
}

// ReadOnlyState is the .tiny-agent directory commands see read-only, or "".
func (s *Sandbox) ReadOnlyState() string {
	if s == nil || s.spawner == nil || s.spawner.cont == nil {
		return ""
	}
	if c := s.spawner.cont; c.ns || c.threadRO {
		return c.stateDir
	}
	return ""
}

// stateDir is the .tiny-agent directory of the working directory, or "".
func (s *Sandbox) stateDir() string {
	if s.spawner == nil || s.spawner.cont == nil {
		return ""
	}
	return s.spawner.cont.stateDir
}

// Confined reports whether commands run under Landlock.
func (s *Sandbox) Confined() bool { return s != nil && s.spawner != nil && s.mode != Off }

// NetworkOff reports whether commands are denied TCP bind and connect.
func (s *Sandbox) NetworkOff() bool { return s != nil && s.networkOff }

// NetworkRules is the proxy commands reach the network through, or nil
// when --network rules is not in force.
func (s *Sandbox) NetworkRules() *netproxy.Proxy {
	if s == nil || s.net == nil {
		return nil
	}
	return s.net.proxy
}

// Start starts cmd confined: the command and everything it starts may
// write only under the writable roots (and, with --network off, may not
// bind or connect TCP sockets). It is exec.Cmd.Start for a nil Sandbox or
// one that cannot confine commands. Callers set cmd.SysProcAttr as usual
// (a process group, Pdeathsig); a Pdeathsig fires only when tiny-go exits,
// because the confining thread lives as long as the Sandbox.
//
// This is the API for everything that runs a command for the model: the
// stdio MCP client starts its server with it.
func (s *Sandbox) Start(cmd *exec.Cmd) error {
	if s == nil || s.spawner == nil {
		return cmd.Start()
	}
	if s.net != nil {
		return s.net.start(cmd, func() error { return s.spawner.start(cmd) })
	}
	return s.spawner.start(cmd)
}

// StartServer starts cmd, a server that speaks over its stdin and stdout
// (an MCP stdio server, a language server), confined as Start does, in a
// session of its own (the terminal's signals never reach it; its group can
// be killed at once) that dies with tiny-go. It returns our ends of its
// stdin and stdout: pipes of our own rather than cmd.StdoutPipe, which
// Wait closes while a reader may still be reading. cmd.Stderr is the
// caller's (a log file).
func (s *Sandbox) StartServer(cmd *exec.Cmd) (stdin, stdout *os.File, err error) {
	childIn, stdin, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	stdout, childOut, err := os.Pipe()
	if err != nil {
		childIn.Close()
		stdin.Close()
		return nil, nil, err
	}
	cmd.Stdin, cmd.Stdout = childIn, childOut
	cmd.SysProcAttr = procs.DiesWithUs(&syscall.SysProcAttr{Setsid: true})
	err = s.Start(cmd)
	childIn.Close()
	childOut.Close()
	if err != nil {
		stdin.Close()
		stdout.Close()
		return nil, nil, err
	}
	return stdin, stdout, nil
}

// Do runs fn on the confining thread, so the kernel holds the file
// operations in it to the same rules as commands (CheckWrite explains a
// refusal; Do makes sure a symlink swapped in meanwhile changes nothing).
// fn must do its work on the calling goroutine: plain file system calls,
// no goroutines, no network. Without confinement fn runs directly.
func (s *Sandbox) Do(fn func() error) error {
	if s == nil || s.spawner == nil || s.mode == Off {
		return fn()
	}
	return s.spawner.confined.do(spawnRequest{fn: fn})
}

// Close ends the confining thread. Processes started with a Pdeathsig
// receive it then, so the host closes the Sandbox last, on exit.
func (s *Sandbox) Close() {
	if s != nil && s.spawner != nil {
		s.spawner.close()
	}
}

// DeniedError is a write or edit outside the writable roots.
type DeniedError struct {
	Path  string // as the model wrote it
	Abs   string // resolved
	Mode  Mode
	Roots []string
}

func (e *DeniedError) Error() string {
	fix := "--writable " + suggestRoot(e.Abs)
	if e.Mode == ReadOnly {
		fix = "--sandbox workspace"
		if !underAny(e.Abs, e.Roots) {
			fix = "--sandbox workspace --writable " + suggestRoot(e.Abs)
		}
	}
	return fmt.Sprintf("Sandbox (%s mode) refused to write %s: it is outside the writable roots (%s). "+
		"To allow it, the user can restart tiny-go with %s, or with --sandbox off.",
		e.Mode, e.Path, strings.Join(e.Roots, ", "), fix)
}

// suggestRoot is the directory to name in the fix: the file's directory.
func suggestRoot(abs string) string { return filepath.Dir(abs) }

// CheckWrite reports whether the file tools may create or change the file
// at abs (absolute). It resolves symlinks of the part of the path that
// exists, as Landlock would, so a link inside a root that points outside
// is refused. shown is the path as the model wrote it, for the message.
func (s *Sandbox) CheckWrite(shown, abs string) error {
	if s == nil || s.mode == Off {
		return nil
	}
	real := resolveExisting(abs)
	if dir := s.stateDir(); dir != "" && underAny(real, []string{dir}) {
		// As root the kernel refuses it too (Do runs where the directory
		// is mounted read-only); otherwise this check is what refuses it.
		return fmt.Errorf("Sandbox refused to write %s: %s holds tiny-go's sessions, checkpoints and approvals, which only tiny-go itself changes", shown, dir)
	}
	if underAny(real, s.roots) {
		return nil
	}
	return &DeniedError{Path: shown, Abs: real, Mode: s.mode, Roots: s.Roots()}
}

// resolveExisting resolves the symlinks of the longest existing prefix of
// abs and appends the rest.
func resolveExisting(abs string) string {
	abs = filepath.Clean(abs)
	rest := ""
	for p := abs; ; {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(r, rest)
		} else if !errors.Is(err, os.ErrNotExist) {
			// Unreadable or a loop: judge the path as written.
			return abs
		}
		parent := filepath.Dir(p)
		if parent == p {
			return abs
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = parent
	}
}

// underAny reports whether path is one of roots or beneath one.
func underAny(path string, roots []string) bool {
	for _, r := range roots {
		if path == r || strings.HasPrefix(path, r+string(filepath.Separator)) || r == "/" {
			return true
		}
	}
	return false
}

// NetworkRefusals are the lines naming what the proxy of --network rules
// refused to cmd (each with the rule that would allow it), once cmd has
// ended: a caller appends them to the command's result. None without
// --network rules.
func (s *Sandbox) NetworkRefusals(cmd *exec.Cmd) []string {
	if s == nil || s.net == nil {
		return nil
	}
	return s.net.Refusals(cmd)
}
