package procs

import (
	"bytes"
	"strconv"
	"testing"
)

// FuzzParseStat checks the allocation-free parser against the obvious
// bytes.Fields one.
func FuzzParseStat(f *testing.F) {
	f.Add([]byte("1234 (sleep) S 1 1234 1234 0 -1 4194560 95 0 0 0 0 0 0 0 20 0 1 0 98765 2277376 128 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n"))
	f.Add([]byte("7 (a (weird) name) R 7 8 9 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 42 0 0"))
	f.Add([]byte("1 () Z"))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := ParseStat(data)
		i := bytes.LastIndexByte(data, ')')
		if i < 0 {
			if err == nil {
				t.Fatal("accepted a line without a command name")
			}
			return
		}
		fields := bytes.Fields(data[i+1:])
		ok := len(fields) >= 20 && len(fields[0]) == 1
		var ppid, pgrp, sid, start uint64
		for j, dst := range map[int]*uint64{1: &ppid, 2: &pgrp, 3: &sid, 19: &start} {
			if !ok {
				break
			}
			v, perr := strconv.ParseUint(string(fields[j]), 10, 64)
			if perr != nil || len(fields[j]) > 19 || bytes.ContainsAny(fields[j], "+-") {
				ok = false
				break
			}
			*dst = v
		}
		// bytes.Fields also splits on tabs and other space; /proc uses
		// only ' ' and '\n', so only compare inputs made of those.
		if bytes.ContainsAny(data[i+1:], "\t\v\f\r\u0085\u00a0") {
			return
		}
		if ok != (err == nil) {
			t.Fatalf("reference ok=%v, parser err=%v", ok, err)
		}
		if ok && (got.PPID != int(ppid) || got.PGRP != int(pgrp) || got.Session != int(sid) || got.StartTicks != start || got.State != fields[0][0]) {
			t.Fatalf("got %+v, want pgrp %d sid %d start %d", got, pgrp, sid, start)
		}
	})
}
