package tools

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tiny-agent/tiny-go/internal/procs"
	"github.com/tiny-agent/tiny-go/internal/sandbox"
	"github.com/tiny-agent/tiny-go/internal/store"
)

// bash limits and timings (tools.md, runtime.md section 3).
const (
	bashDefaultTimeout = 120.0 // seconds
	// bashStreamCap caps stdout and stderr, each.
	bashStreamCap = 10_000_000
	// killGrace is how long a group has between SIGTERM and SIGKILL.
	killGrace = 200 * time.Millisecond
	// drainWait bounds the wait for the pipes to close once the process
	// group is gone or killed: a process that escaped the group may hold
	// them open forever.
	drainWait = 300 * time.Millisecond
	// groupPoll is how often the group is first checked after the shell
	// exited while its pipes are still open; the interval doubles up to
	// groupPollMax (each check scans /proc).
	groupPoll    = 25 * time.Millisecond
	groupPollMax = 500 * time.Millisecond
)

// bashTool is the built-in bash.
type bashTool struct {
	workDir string
	newID   func() (string, error)
	env     []string // nil: the process environment
	sandbox *sandbox.Sandbox
	procs   *procs.Tracker
	txns    Transactions // nil: commands run on the tree itself
	review  Reviewer     // nil: a transaction's changes apply without asking
	sealed  *Sealed      // nil: no command runs sealed (sealed.go)
}

func (bashTool) Definition() Definition {
	return Definition{
		Name: "bash",
		Description: "Run a shell command with sh -c in the working directory and return its stdout and stderr. " +
			"Only the last 2000 lines or 50KB of output are returned; when output is cut, the complete output is " +
			"saved to a file whose path is given. The command is killed after the timeout (default 120 seconds). " +
			"Use bg for servers and other long-running processes.",
		Parameters: jsontext.Value(`{"type":"object","properties":{` +
			`"command":{"type":"string","description":"The shell command to run."},` +
			`"timeout":{"type":"number","exclusiveMinimum":0,"description":"Timeout in seconds (default 120)."}` +
			`},"required":["command"]}`),
	}
}

func (bashTool) Replay() Replay { return Replay{Policy: ReplayNever, Key: "builtin:bash:v1"} }

func (t bashTool) Run(ctx context.Context, args jsontext.Value) Result {
	var a struct {
		Command jsontext.Value `json:"command"`
		Timeout jsontext.Value `json:"timeout"`
	}
	if err := decodeArgs(args, &a); err != nil {
		return errorResult(err)
	}
	command, err := nonEmptyString("command", a.Command)
	if err != nil {
		return errorResult(err)
	}
	seconds, err := optionalSeconds("timeout", a.Timeout, bashDefaultTimeout)
	if err != nil {
		return errorResult(err)
	}
	timeout := time.Duration(math.MaxInt64)
	if seconds < timeout.Seconds() {
		timeout = time.Duration(seconds * float64(time.Second))
	}
	if ctx.Err() != nil {
		return Result{Content: "Command aborted before it started.", IsError: true}
	}
	capture := newBashCapture(t.workDir, t.newID)
	defer capture.close()
	var tx Transaction
	if t.txns != nil {
		if err := t.txns.Blocked(ctx); err != nil {
			return notRun(err)
		}
		tx = t.txns.For(ctx)
	}
	sb, env, unseal, sealed, err := t.seal(command)
	if err != nil {
		return errorResult(fmt.Errorf("a temporary directory for the sealed command: %w", err))
	}
	start, jr := starterOf(sb, tx)
	end, err := runShell(ctx, sb, t.procs, t.workDir, env, command, timeout, capture, start)
	jnote := jr.stop()
	unseal()
	if ok, rerr := review(ctx, t.review, command, tx, sealed); !ok {
		text := capture.render() + rejected
		if rerr != nil {
			text += fmt.Sprintf(" (%v)", rerr)
		}
		return Result{Content: text, IsError: true}
	}
	note := jnote + commitNote(tx)
	if err != nil {
		return Result{Content: fmt.Sprintf("Cannot run sh: %v", err) + note, IsError: true}
	}

	text := capture.render()
	text += networkNote(text, end.network) + note
	switch end.reason {
	case endCapped:
		text += "\n\nBash output exceeded the 10MB safety cap; complete output was not captured."
	case endTimeout:
		text += fmt.Sprintf("\n\nCommand timed out after %s seconds.", strconv.FormatFloat(seconds, 'f', -1, 64))
	case endAborted:
		text += "\n\nCommand aborted."
	default:
		if end.code == 0 {
			return Result{Content: text}
		}
		text += fmt.Sprintf("\n\nCommand exited with code %d", end.code)
	}
	return Result{Content: text, IsError: true}
}

// endReason says why runShell stopped waiting.
type endReason int

const (
	endExited  endReason = iota // the shell exited and its output was drained
	endTimeout                  // the timeout passed; the group was killed
	endCapped                   // a stream passed the cap; the group was killed
	endAborted                  // ctx was cancelled; the group was killed
)

// shellEnd is how a command ended.
type shellEnd struct {
	reason endReason
	code   int // exit code when reason is endExited (128+n for signal n)
	// network are the lines of what --network rules refused the command.
	network []string
}

// networkNote is the lines of what --network rules refused, after the
// output and a blank line, one per host with the rule that allows it.
func networkNote(output string, lines []string) string {
	if len(lines) == 0 {
		return ""
	}
	sep := "\n\n"
	switch {
	case output == "":
		sep = ""
	case strings.HasSuffix(output, "\n"):
		sep = "\n"
	}
	return sep + strings.Join(lines, "\n")
}

// runShell runs command with sh -c in its own process group, feeding its
// stdout and stderr to capture, and returns once the command is done. It
// never waits unboundedly after a kill, nor on pipes held open by a process
// that left the group.
//
// Every process of the command carries a marker of tr in its environment;
// when the command is killed (timeout, cap, abort), what it started outside
// its process group (setsid, nohup, double forks) is killed with it.
func runShell(ctx context.Context, sb *sandbox.Sandbox, tr *procs.Tracker, dir string, env []string, command string, timeout time.Duration, capture *bashCapture, start func(*exec.Cmd) error) (shellEnd, error) {
	sh, err := startShell(tr, dir, env, command, start)
	if err != nil {
		return shellEnd{}, err
	}
	sh.watch(capture)
	reason := sh.await(ctx, timeout, capture)
	if reason != endExited {
		sh.kill(tr)
	}
	sh.closeOutput()
	end := sh.finish(tr, reason, capture)
	end.network = sb.NetworkRefusals(sh.cmd)
	return end, nil
}

// shellRun is one started command: its process group, the read ends of
// its output pipes, and what has been seen of its exit and its output.
type shellRun struct {
	cmd        *exec.Cmd
	pgid       int
	marker     string
	outR, errR *os.File

	waitErr           error         // set before exited is closed
	exited            chan struct{} // closed when cmd.Wait returned
	exitedC, drainedC chan struct{} // nil once received
	readers           sync.WaitGroup
	groupGone         bool // the group was seen gone while pipes stayed open
}

// startShell starts command in a process group of its own, with pipes for
// its output whose write ends only the child holds; start is how (the
// sandbox's Start, over an overlay, or journaled: starterOf).
func startShell(tr *procs.Tracker, dir string, env []string, command string, start func(*exec.Cmd) error) (*shellRun, error) {
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return nil, err
	}
	cmd := exec.Command("sh", "-c", command)
	cmd.Dir = dir
	marker := tr.NewMarker()
	cmd.Env = withMarker(env, marker)
	// *os.File outputs are handed to the child directly, so cmd.Wait does
	// not wait for copying goroutines (which a grandchild could block).
	cmd.Stdout, cmd.Stderr = outW, errW
	// Pdeathsig: the command dies with tiny-go even when tiny-go is killed
	// with SIGKILL.
	cmd.SysProcAttr = procs.DiesWithUs(&syscall.SysProcAttr{Setpgid: true})
	err = start(cmd)
	outW.Close()
	errW.Close()
	if err != nil {
		outR.Close()
		errR.Close()
		return nil, err
	}
	pgid := cmd.Process.Pid
	tr.Started(pgid, command)
	return &shellRun{cmd: cmd, pgid: pgid, marker: marker, outR: outR, errR: errR}, nil
}

// watch waits for the shell and drains its output in goroutines, so that
// await can watch the clock, the cap and ctx at the same time.
func (s *shellRun) watch(capture *bashCapture) {
	exited := make(chan struct{})
	go func() {
		s.waitErr = s.cmd.Wait()
		close(exited)
	}()
	for stream, r := range []*os.File{s.outR, s.errR} {
		s.readers.Go(func() { capture.drain(stream, r) })
	}
	drained := make(chan struct{})
	go func() {
		s.readers.Wait()
		close(drained)
	}()
	s.exited = exited
	s.exitedC, s.drainedC = exited, drained
}

// await waits until the shell exited and its output is drained, or until
// something ends the command early, and says which.
func (s *shellRun) await(ctx context.Context, timeout time.Duration, capture *bashCapture) endReason {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var (
		poll, drainTimeout <-chan time.Time
		pollTimer          *time.Timer
		pollEvery          = groupPoll
	)
	for s.exitedC != nil || s.drainedC != nil {
		select {
		case <-s.exitedC:
			s.exitedC = nil
			if s.drainedC != nil {
				// Someone still holds the pipes: a background job of the
				// command (wait for it, as a shell would) or a process that
				// left the group (do not).
				pollTimer = time.NewTimer(pollEvery)
				defer func() { pollTimer.Stop() }()
				poll = pollTimer.C
			}
		case <-s.drainedC:
			s.drainedC = nil
		case <-poll:
			if !groupAlive(s.pgid) {
				s.groupGone, poll = true, nil
				drainTimeout = time.After(drainWait)
				break
			}
			// A long-running job: check less and less often.
			pollEvery = min(2*pollEvery, groupPollMax)
			pollTimer.Reset(pollEvery)
		case <-drainTimeout:
			return endExited
		case <-timer.C:
			return endTimeout
		case <-capture.capHit:
			return endCapped
		case <-ctx.Done():
			return endAborted
		}
	}
	return endExited
}

// kill ends the command early: its group, then what it started outside
// the group; the wait for exit and drain after that is bounded.
func (s *shellRun) kill(tr *procs.Tracker) {
	if !s.groupGone {
		// Use a fresh context: the grace period must run even when ctx
		// is what was cancelled.
		terminateGroup(context.Background(), s.pgid, killGrace)
	}
	tr.KillMarked(s.marker)
	bound := time.NewTimer(drainWait)
	for s.exitedC != nil || s.drainedC != nil {
		select {
		case <-s.exitedC:
			s.exitedC = nil
		case <-s.drainedC:
			s.drainedC = nil
		case <-bound.C:
			s.exitedC, s.drainedC = nil, nil
		}
	}
	bound.Stop()
}

// closeOutput closes the read ends, which unblocks readers stuck on pipes
// that an escaped process holds; after this no more output is captured.
func (s *shellRun) closeOutput() {
	s.outR.Close()
	s.errR.Close()
	s.readers.Wait()
}

// finish tells tr the group is gone (if it is) and says how the command
// ended: a capped stream counts as capped even when the shell exited.
func (s *shellRun) finish(tr *procs.Tracker, reason endReason, capture *bashCapture) shellEnd {
	if !groupAlive(s.pgid) {
		tr.Ended(s.pgid)
	}
	end := shellEnd{reason: reason}
	if reason == endExited && capture.capped() {
		end.reason = endCapped
	}
	if end.reason == endExited {
		<-s.exited // drained after exit: waitErr is set
		end.code = exitCode(s.waitErr)
	}
	return end
}

// withMarker is env (nil: the process environment) with marker added.
func withMarker(env []string, marker string) []string {
	if marker == "" {
		return env
	}
	if env == nil {
		env = os.Environ()
	}
	return append(env[:len(env):len(env)], marker)
}

// exitCode converts a cmd.Wait error into a shell-style exit code.
func exitCode(err error) int {
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	}
	return -1
}

// bashCapture collects a command's output in bounded memory: a TailBuffer
// of the end, plus, once the output no longer fits the limits, a log file
// in <workDir>/.tiny-agent/tool-output with everything captured.
type bashCapture struct {
	workDir string
	newID   func() (string, error)
	capHit  chan struct{} // closed when a stream passes bashStreamCap

	mu      sync.Mutex
	tail    *TailBuffer
	pending []byte // everything, until the log file is opened
	log     *os.File
	logPath string
	logErr  error
	counts  [2]int64
	hit     bool
}

func newBashCapture(workDir string, newID func() (string, error)) *bashCapture {
	return &bashCapture{
		workDir: workDir,
		newID:   newID,
		capHit:  make(chan struct{}),
		tail:    NewTailBuffer(MaxOutputLines, MaxOutputBytes),
	}
}

// drain copies stream (0 stdout, 1 stderr) from r until EOF or close.
func (c *bashCapture) drain(stream int, r *os.File) {
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			c.write(stream, buf[:n])
		}
		if err != nil {
			return
		}
	}
}

// write records p from stream. Past the cap nothing more is kept; reading
// continues only so the command is not blocked until it is killed.
func (c *bashCapture) write(stream int, p []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.hit {
		return
	}
	if room := bashStreamCap - c.counts[stream]; int64(len(p)) > room {
		p = p[:room]
		c.hit = true
		close(c.capHit)
	}
	c.counts[stream] += int64(len(p))
	c.tail.Write(p)
	switch {
	case c.log != nil:
		if _, err := c.log.Write(p); err != nil {
			c.logErr = err
			c.closeLog()
		}
	case c.logErr != nil:
	case c.tail.Exceeded():
		c.openLog()
		if c.log != nil {
			if _, err := c.log.Write(append(c.pending, p...)); err != nil {
				c.logErr = err
				c.closeLog()
			}
		}
		c.pending = nil
	default:
		c.pending = append(c.pending, p...)
	}
}

func (c *bashCapture) capped() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hit
}

// openLog creates the full-output file. Called with c.mu held.
func (c *bashCapture) openLog() {
	id, err := c.newID()
	if err != nil {
		c.logErr = err
		return
	}
	// The output may contain secrets: a private directory (0700, no
	// symlinks, this user's) and a private file (0600, not a symlink).
	dir, err := store.StateDir(c.workDir, "tool-output", true)
	if err != nil {
		c.logErr = err
		return
	}
	f, err := store.OpenSidecarFile(dir, id+".log", os.O_CREATE|os.O_EXCL|os.O_WRONLY)
	if err != nil {
		c.logErr = err
		return
	}
	c.log, c.logPath = f, f.Name()
}

// closeLog closes the log file. Called with c.mu held.
func (c *bashCapture) closeLog() {
	if c.log != nil {
		if err := c.log.Close(); err != nil && c.logErr == nil {
			c.logErr = err
		}
		c.log = nil
	}
}

func (c *bashCapture) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closeLog()
}

// render returns the output the model sees, without the exit suffix: the
// tail, and when it was cut the notice pointing at the full log.
func (c *bashCapture) render() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closeLog()
	t := c.tail.Tail()
	if len(t.Text) == 0 && !t.Truncated {
		return "(no output)"
	}
	var b strings.Builder
	b.WriteString(strings.ToValidUTF8(string(t.Text), "\uFFFD"))
	if t.Truncated {
		fmt.Fprintf(&b, "\n\n[Showing lines %d-%d of %d. ", t.FirstLine, t.TotalLines, t.TotalLines)
		label := "Full output"
		if c.hit {
			label = "Captured output; command exceeded the 10MB safety cap"
		}
		if c.logErr != nil {
			fmt.Fprintf(&b, "The full output could not be saved: %v]", c.logErr)
		} else {
			fmt.Fprintf(&b, "%s: %s]", label, c.logPath)
		}
	}
	return b.String()
}
