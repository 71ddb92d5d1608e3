package tools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"syscall"
	"time"
)

// Process-group helpers for bash and bg (runtime.md section 3). They read
// /proc, so the tools are Linux-only.

// procStat holds the fields of /proc/<pid>/stat that the tools use.
type procStat struct {
	State      byte   // field 3: R, S, D, Z, ...
	PGRP       int    // field 5
	Session    int    // field 6
	StartTicks uint64 // field 22: start time in clock ticks after boot
}

// readProcStat reads /proc/<pid>/stat.
func readProcStat(pid int) (procStat, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, err
	}
	return parseProcStat(data)
}

// parseProcStat parses the text of /proc/<pid>/stat. The command name in
// field 2 is parenthesized and may itself contain spaces and parentheses,
// so the fields are counted from the last ')'.
func parseProcStat(data []byte) (procStat, error) {
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return procStat{}, errors.New("malformed /proc stat: no command name")
	}
	f := bytes.Fields(data[i+1:]) // f[0] is field 3
	if len(f) < 20 || len(f[0]) != 1 {
		return procStat{}, errors.New("malformed /proc stat: too few fields")
	}
	pgrp, err := strconv.Atoi(string(f[2]))
	if err != nil {
		return procStat{}, fmt.Errorf("malformed /proc stat pgrp: %w", err)
	}
	sid, err := strconv.Atoi(string(f[3]))
	if err != nil {
		return procStat{}, fmt.Errorf("malformed /proc stat session: %w", err)
	}
	start, err := strconv.ParseUint(string(f[19]), 10, 64)
	if err != nil {
		return procStat{}, fmt.Errorf("malformed /proc stat starttime: %w", err)
	}
	return procStat{State: f[0][0], PGRP: pgrp, Session: sid, StartTicks: start}, nil
}

// dead reports whether a process state means it no longer runs. Zombies
// count as dead: the init of some containers never reaps them.
func (s procStat) dead() bool { return s.State == 'Z' || s.State == 'X' || s.State == 'x' }

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
		if st, err := readProcStat(pid); err == nil && st.PGRP == pgid && (!session || st.Session == pgid) && !st.dead() {
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
	if err := syscall.Kill(-pgid, syscall.SIGTERM); errors.Is(err, syscall.ESRCH) {
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
