// Package procs keeps the processes tiny-go's commands start from outliving
// it: every command carries a marker in its environment that its
// descendants inherit (setsid, nohup and double forks keep it), each run
// records its process groups with their start times in
// <cwd>/.tiny-agent/procs/<run>.json (0600), and what a killed run left
// behind is found and killed by the next start in that directory. Start
// times make sure a recycled PID is never signalled.
package procs

import (
	"bytes"
	"errors"
	"strconv"
	"syscall"
)

// Stat holds the fields of /proc/<pid>/stat that tiny-go uses.
type Stat struct {
	State      byte   // field 3: R, S, D, Z, ...
	PPID       int    // field 4
	PGRP       int    // field 5
	Session    int    // field 6
	StartTicks uint64 // field 22: start time in clock ticks after boot
}

// Dead reports whether a process state means it no longer runs. Zombies
// count as dead: the init of some containers never reaps them.
func (s Stat) Dead() bool { return s.State == 'Z' || s.State == 'X' || s.State == 'x' }

// ReadStat reads /proc/<pid>/stat. It reads into a stack buffer and parses
// in place: scanning every process of a busy machine must not allocate per
// process.
func ReadStat(pid int) (Stat, error) {
	fd, err := syscall.Open("/proc/"+strconv.Itoa(pid)+"/stat", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return Stat{}, err
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
			return Stat{}, err
		}
		if m == 0 {
			break
		}
		n += m
	}
	return ParseStat(buf[:n])
}

// ParseStat parses the text of /proc/<pid>/stat. The command name in field
// 2 is parenthesized and may itself contain spaces and parentheses, so the
// fields are counted from the last ')'.
func ParseStat(data []byte) (Stat, error) {
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return Stat{}, errors.New("malformed /proc stat: no command name")
	}
	// fields[k] is field k+3 of proc(5); only 3 to 6 and 22 are needed.
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
		return Stat{}, errors.New("malformed /proc stat: too few fields")
	}
	ppid, ok0 := parseDecimal(fields[1])
	pgrp, ok1 := parseDecimal(fields[2])
	sid, ok2 := parseDecimal(fields[3])
	start, ok3 := parseDecimal(fields[19])
	if !ok0 || !ok1 || !ok2 || !ok3 {
		return Stat{}, errors.New("malformed /proc stat: a number field is not a number")
	}
	return Stat{State: fields[0][0], PPID: int(ppid), PGRP: int(pgrp), Session: int(sid), StartTicks: start}, nil
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
