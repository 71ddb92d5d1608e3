package cmdutil

import (
	"context"
	"fmt"
	"io"
	"os/signal"
	"syscall"

	"github.com/tiny-agent/tiny-go/internal/procs"
)

// Version is tiny-go's version: --version, and what it tells the servers
// and hosts it speaks to.
const Version = "0.1.0-dev"

// Interruptible is ctx cancelled by Ctrl+C (or SIGTERM, SIGHUP) while MCP
// servers connect, so a slow server is given up, and every server already
// started is stopped, instead of the signal killing tiny-go outright.
func Interruptible(ctx context.Context) (context.Context, context.CancelFunc) {
	return signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
}

// TrackProcesses stops what a killed tiny-go left running in cwd (saying
// so on stderr) and records the processes started from now on.
func TrackProcesses(cwd string, stderr io.Writer) (*procs.Tracker, error) {
	n, err := procs.ReapStale(cwd)
	if err != nil {
		fmt.Fprintf(stderr, "%s: warning: %v\n", ProgramName, err)
	}
	if n > 0 {
		fmt.Fprintf(stderr, "%s: stopped %d process(es) left running by an earlier tiny-go in this directory that was killed\n", ProgramName, n)
	}
	return procs.Open(cwd)
}
