package tools

import (
	"context"
	"errors"
	"os"
	"strconv"
	"syscall"
	"time"

	"github.com/tiny-agent/tiny-go/internal/procs"
	"github.com/tiny-agent/tiny-go/internal/sandbox"
)

// Process-group helpers for bash and bg (runtime.md section 3). They read
// /proc, so the tools are Linux-only.

// procStat is a process's /proc/<pid>/stat.
type procStat = procs.Stat

func readProcStat(pid int) (procStat, error) { return procs.ReadStat(pid) }

func parseProcStat(data []byte) (procStat, error) { return procs.ParseStat(data) }

// groupAlive reports whether any live (non-zombie) process is in group pgid.
func groupAlive(pgid int) bool { return liveMember(pgid, false) }

// sessionLeaderGroupAlive reports whether any live process is in group pgid
// of session pgid: the group of a bg process (started with setsid), which
// an unrelated process that happens to reuse the number would not match.
func sessionLeaderGroupAlive(pgid int) bool { return liveMember(pgid, true) }

// liveMember reports whether a live process is in group pgid (and, with
// session, in session pgid).
func liveMember(pgid int, session bool) bool {
	if err := syscall.Kill(-pgid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	// kill(2) succeeds for a group of zombies too; look closer.
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return true
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, err := readProcStat(pid); err == nil && st.PGRP == pgid && (!session || st.Session == pgid) && !st.Dead() {
			return true
		}
	}
	return false
}

// waitGroupGone polls until group pgid has no live process, the timeout
// passes or ctx is done. It reports whether the group is gone.
func waitGroupGone(ctx context.Context, pgid int, timeout time.Duration) bool {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		if !groupAlive(pgid) {
			return true
		}
		select {
		case <-tick.C:
		case <-deadline.C:
			return !groupAlive(pgid)
		case <-ctx.Done():
			return !groupAlive(pgid)
		}
	}
}

// killWait bounds the wait for a SIGKILLed group to disappear (a process
// in uninterruptible sleep dies only when it wakes).
const killWait = 500 * time.Millisecond

// terminateGroup sends SIGTERM to group pgid, waits up to grace (or until
// ctx is done) for it to exit, then sends SIGKILL and waits up to killWait
// for the group to be gone. It reports whether SIGKILL was needed.
func terminateGroup(ctx context.Context, pgid int, grace time.Duration) (killed bool) {
	// SignalGroup: a sandboxed command is PID 1 of its namespace, which
	// the kernel shields from signals it does not handle.
	if err := sandbox.SignalGroup(pgid, syscall.SIGTERM); errors.Is(err, syscall.ESRCH) {
		return false
	}
	// A stopped process only acts on SIGTERM once continued.
	syscall.Kill(-pgid, syscall.SIGCONT)
	if waitGroupGone(ctx, pgid, grace) {
		return false
	}
	syscall.Kill(-pgid, syscall.SIGKILL)
	waitGroupGone(context.Background(), pgid, killWait)
	return true
}
