package tools

import (
	"bytes"
	"context"
	"errors"
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

// readProcStat reads /proc/<pid>/stat. It reads into a stack buffer and
// parses in place: scanning every process of a busy machine after a kill
// must not allocate per process.
func readProcStat(pid int) (procStat, error) {
	fd, err := syscall.Open("/proc/"+strconv.Itoa(pid)+"/stat", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return procStat{}, err
	}
	defer syscall.Close(fd)
	var buf [2048]byte
	n := 0
	for n < len(buf) {
		m, err := syscall.Read(fd, buf[n:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return procStat{}, err
		}
		if m == 0 {
			break
		}
		n += m
	}
	return parseProcStat(buf[:n])
}

// parseProcStat parses the text of /proc/<pid>/stat. The command name in
// field 2 is parenthesized and may itself contain spaces and parentheses,
// so the fields are counted from the last ')'.
func parseProcStat(data []byte) (procStat, error) {
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return procStat{}, errors.New("malformed /proc stat: no command name")
	}
	// fields[k] is field k+3 of proc(5); only 3, 5, 6 and 22 are needed.
	var fields [20][]byte
	k := 0
	for rest := data[i+1:]; k < len(fields); k++ {
		rest = bytes.TrimLeft(rest, " \n")
		if len(rest) == 0 {
			break
		}
		end := bytes.IndexAny(rest, " \n")
		if end < 0 {
			end = len(rest)
		}
		fields[k], rest = rest[:end], rest[end:]
	}
	if k < len(fields) || len(fields[0]) != 1 {
		return procStat{}, errors.New("malformed /proc stat: too few fields")
	}
	pgrp, ok1 := parseDecimal(fields[2])
	sid, ok2 := parseDecimal(fields[3])
	start, ok3 := parseDecimal(fields[19])
	if !ok1 || !ok2 || !ok3 {
		return procStat{}, errors.New("malformed /proc stat: a number field is not a number")
	}
	return procStat{State: fields[0][0], PGRP: int(pgrp), Session: int(sid), StartTicks: start}, nil
}

// parseDecimal parses a non-negative decimal without allocating.
func parseDecimal(b []byte) (uint64, bool) {
	if len(b) == 0 || len(b) > 19 {
		return 0, false
	}
	var v uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + uint64(c-'0')
	}
	return v, true
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
