package hooks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"syscall"
	"time"

	"github.com/tiny-agent/tiny-go/internal/procs"
)

// MaxOutput is how much of each of a hook's stdout and stderr is kept;
// the rest is read and dropped, so a hook printing megabytes neither
// blocks nor fills memory.
const MaxOutput = 256 << 10

// ran is how one hook process ended.
type ran struct {
	code      int // exit code; -1 when it did not exit by itself
	stdout    []byte
	stderr    []byte
	timedOut  bool
	truncated bool  // more output than MaxOutput
	err       error // it could not be started, or was killed
}

// capped keeps the first MaxOutput bytes written to it.
type capped struct {
	buf  bytes.Buffer
	over bool
}

func (c *capped) Write(p []byte) (int, error) {
	if room := MaxOutput - c.buf.Len(); room > 0 {
		if len(p) > room {
			c.buf.Write(p[:room])
			c.over = true
		} else {
			c.buf.Write(p)
		}
	} else if len(p) > 0 {
		c.over = true
	}
	return len(p), nil
}

// runCommand runs one hook command with sh -c in its own process group,
// stdin holding the input JSON; on timeout or when ctx ends the whole
// group is killed. start starts the process (nil: exec.Cmd.Start): the
// sandbox's Start contains a hook as it contains a command, and the hook
// is then the first process of its own PID namespace, so killing it
// kills everything it started, in its group or not.
func runCommand(ctx context.Context, h Hook, dir string, env []string, stdin []byte, start func(*exec.Cmd) error) ran {
	timeout := h.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.Command("/bin/sh", "-c", h.Command)
	cmd.Dir = dir
	cmd.Env = env
	cmd.Stdin = bytes.NewReader(stdin)
	var out, errOut capped
	cmd.Stdout, cmd.Stderr = &out, &errOut
	// Its own group, so a timeout kills what it started too; and it dies
	// with tiny-go rather than outliving a crash.
	cmd.SysProcAttr = procs.DiesWithUs(&syscall.SysProcAttr{Setpgid: true})
	// Output pipes a background child keeps open do not hold us up.
	cmd.WaitDelay = 2 * time.Second
	if start == nil {
		start = (*exec.Cmd).Start
	}
	if err := start(cmd); err != nil {
		return ran{code: -1, err: fmt.Errorf("cannot start: %w", err)}
	}
	done := make(chan struct{})
	go func() {
		select {
		case <-tctx.Done():
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		case <-done:
		}
	}()
	err := cmd.Wait()
	close(done)
	r := ran{code: cmd.ProcessState.ExitCode(), stdout: out.buf.Bytes(), stderr: errOut.buf.Bytes(), truncated: out.over || errOut.over}
	switch {
	case errors.Is(tctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil:
		r.timedOut, r.code = true, -1
		r.err = fmt.Errorf("timed out after %s; its process group was killed", timeout)
	case ctx.Err() != nil:
		r.code, r.err = -1, ctx.Err()
	case r.code < 0 && err != nil:
		r.err = err
	}
	return r
}
