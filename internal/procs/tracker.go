package procs

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/go-json-experiment/json"
	"golang.org/x/sys/unix"

	"github.com/tiny-agent/tiny-go/internal/store"
)

// MarkerVar is the environment variable every command tiny-go starts
// carries, with the value "<run>.<n>": the run that started it and which
// of its commands. Descendants inherit it unless they clear their
// environment.
const MarkerVar = "TINY_GO_PROC"

// dirName is the per-directory state directory of the records.
const dirName = "procs"

// record is <cwd>/.tiny-agent/procs/<run>.json.
type record struct {
	Run string `json:"run"`
	// PID and StartTicks identify the tiny-go process of the run: while it
	// lives, nobody else touches its processes.
	PID        int      `json:"pid"`
	StartTicks uint64   `json:"startTicks"`
	Groups     []group  `json:"groups"`
	Commands   []string `json:"commands,omitzero"` // for people reading the file
}

// group is a process group a command of the run leads.
type group struct {
	PGID int `json:"pgid"`
	// StartTicks is the leader's start time: a pgid whose process started
	// at another time was recycled.
	StartTicks uint64 `json:"startTicks"`
}

// Tracker is the record of one run. A nil *Tracker tracks nothing.
type Tracker struct {
	workDir string
	file    string
	self    int

	mu    sync.Mutex
	dir   string // set once the record is first written
	rec   record
	seq   int
	saved bool
}

// Open prepares the record of this run; it is written in
// <workDir>/.tiny-agent/procs when the first command is about to start.
func Open(workDir string) (*Tracker, error) {
	self := os.Getpid()
	st, err := ReadStat(self)
	if err != nil {
		return nil, fmt.Errorf("process records: %w", err)
	}
	var b [8]byte
	rand.Read(b[:])
	run := hex.EncodeToString(b[:])
	return &Tracker{workDir: workDir, file: run + ".json", self: self,
		rec: record{Run: run, PID: self, StartTicks: st.StartTicks, Groups: []group{}}}, nil
}

// NewMarker returns the marker of a new command, as MarkerVar=value for
// its environment; "" for a nil Tracker. The run's record exists on disk
// before the first marker is handed out, so a SIGKILL at any later point
// leaves something the next start finds.
func (t *Tracker) NewMarker() string {
	if t == nil {
		return ""
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.saved {
		_ = t.saveLocked() // best effort: a missing record only loses the group list
	}
	t.seq++
	return MarkerVar + "=" + t.rec.Run + "." + strconv.Itoa(t.seq)
}

// Started records the process group pgid (led by a process just started)
// before anything else can happen to it.
func (t *Tracker) Started(pgid int, command string) {
	if t == nil {
		return
	}
	st, err := ReadStat(pgid)
	if err != nil {
		return // already gone: nothing to record
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.rec.Groups = append(t.rec.Groups, group{PGID: pgid, StartTicks: st.StartTicks})
	if len(command) > 200 {
		command = command[:200]
	}
	t.rec.Commands = append(t.rec.Commands, command)
	_ = t.saveLocked() // best effort: the marker finds them anyway
}

// Ended forgets group pgid once it is gone.
func (t *Tracker) Ended(pgid int) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for i, g := range t.rec.Groups {
		if g.PGID == pgid {
			t.rec.Groups = append(t.rec.Groups[:i], t.rec.Groups[i+1:]...)
			_ = t.saveLocked()
			return
		}
	}
}

// KillMarked kills, with SIGKILL, every process that carries marker (as
// NewMarker returned it) and every descendant of one: what a command left
// running outside its process group. It returns how many it killed.
func (t *Tracker) KillMarked(marker string) int {
	if t == nil || marker == "" {
		return 0
	}
	_, value, _ := strings.Cut(marker, "=")
	// Only processes started since this run can carry its marker: the
	// environment of older ones is not even read.
	return killMarked(func(v string) bool { return v == value }, t.rec.StartTicks, t.self)
}

// Close kills what is left of the run, its recorded groups and every
// process carrying one of its markers (and, in a subreaper, every remaining
// descendant), and removes the record. The host
// calls it on exit, after the processes it stops politely are stopped.
func (t *Tracker) Close() int {
	if t == nil {
		return 0
	}
	t.mu.Lock()
	rec, started := t.rec, t.seq > 0 || len(t.rec.Groups) > 0
	rec.Groups = append([]group(nil), rec.Groups...)
	t.mu.Unlock()
	n := 0
	if started { // nothing started, nothing to look for
		n = killRun(rec, t.self)
	}
	if isSubreaper() {
		// Adopted orphans that shed the marker are still descendants.
		n += killDescendants(t.self)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.saved {
		_ = os.Remove(filepath.Join(t.dir, t.file))
		t.saved = false
	}
	return n
}

// saveLocked writes the record atomically with mode 0600, never through a
// symlink. Called with t.mu held (or before t is shared).
func (t *Tracker) saveLocked() error {
	if t.dir == "" {
		dir, err := store.StateDir(t.workDir, dirName, true)
		if err != nil {
			return fmt.Errorf("process records: %w", err)
		}
		t.dir = dir
	}
	data, err := json.Marshal(t.rec)
	if err != nil {
		return err
	}
	tmp := "." + t.file + ".tmp"
	f, err := store.OpenSidecarFile(t.dir, tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC)
	if err != nil {
		return fmt.Errorf("process record: %w", err)
	}
	_, err = f.Write(append(data, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(filepath.Join(t.dir, tmp), filepath.Join(t.dir, t.file))
	}
	if err != nil {
		return fmt.Errorf("process record: %w", err)
	}
	t.saved = true
	return nil
}

// ReapStale kills what runs in workDir left behind when they were killed
// (their tiny-go process is gone): their recorded process groups whose
// leader, or whose members, are still the ones recorded, and every process
// carrying one of their markers. It removes their records and returns how
// many processes it killed. Records of live runs are left alone.
func ReapStale(workDir string) (int, error) {
	dir, err := store.StateDir(workDir, dirName, false)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("process records: %w", err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, fmt.Errorf("process records: %w", err)
	}
	self := os.Getpid()
	killed := 0
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".json") || strings.HasPrefix(name, ".") {
			if strings.HasPrefix(name, ".") && strings.HasSuffix(name, ".json.tmp") {
				_ = os.Remove(filepath.Join(dir, name))
			}
			continue
		}
		f, err := store.OpenSidecarFile(dir, name, os.O_RDONLY)
		if err != nil {
			continue
		}
		data, err := readAll(f)
		f.Close()
		var rec record
		if err != nil || json.Unmarshal(data, &rec) != nil || rec.Run+".json" != name {
			// Unreadable: nothing in it can be trusted to signal.
			_ = os.Remove(filepath.Join(dir, name))
			continue
		}
		if alive(rec.PID, rec.StartTicks) {
			continue
		}
		killed += killRun(rec, self)
		_ = os.Remove(filepath.Join(dir, name))
	}
	return killed, nil
}

func readAll(f *os.File) ([]byte, error) {
	var b bytes.Buffer
	_, err := b.ReadFrom(f)
	return b.Bytes(), err
}

// alive reports whether pid is the live process that started at ticks.
func alive(pid int, ticks uint64) bool {
	st, err := ReadStat(pid)
	return err == nil && st.StartTicks == ticks && !st.Dead()
}

// killRun kills the recorded groups of rec and every process carrying one
// of its markers (started after the run did), sparing self.
func killRun(rec record, self int) int {
	n := 0
	for _, g := range rec.Groups {
		if g.PGID > 1 && g.PGID != self && groupIsOurs(g) {
			if unix.Kill(-g.PGID, unix.SIGKILL) == nil {
				n++
			}
		}
	}
	prefix := rec.Run + "."
	return n + killMarked(func(v string) bool { return strings.HasPrefix(v, prefix) }, rec.StartTicks, self)
}

// groupIsOurs reports whether process group g is still the recorded one:
// its leader lives with the recorded start time, or the leader is gone and
// members remain (a pgid stays allocated while any member references it,
// so it cannot have been recycled).
func groupIsOurs(g group) bool {
	if st, err := ReadStat(g.PGID); err == nil {
		if st.StartTicks != g.StartTicks {
			return false // the pid was recycled: the recorded group had ended
		}
		if !st.Dead() {
			return true
		}
		// A zombie leader (no one reaps it once tiny-go is gone) still
		// holds its pid: its live members are the recorded group's.
	}
	found := false
	eachProcess(func(pid int, st Stat) {
		if st.PGRP == g.PGID && !st.Dead() && st.StartTicks >= g.StartTicks {
			found = true
		}
	})
	return found
}

// GroupAlive reports whether a live (not zombie) process is in process
// group pgid.
func GroupAlive(pgid int) bool {
	found := false
	eachProcess(func(_ int, st Stat) {
		if st.PGRP == pgid && !st.Dead() {
			found = true
		}
	})
	return found
}

// eachProcess calls fn for every readable process.
func eachProcess(fn func(pid int, st Stat)) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, err := ReadStat(pid); err == nil {
			fn(pid, st)
		}
	}
}

// killMarked kills every live process whose marker value matches (and
// that started at or after since), and their descendants, sparing self and
// its ancestors. It repeats while it finds any, since a process may fork
// between the scan and the kill, and returns how many it killed.
func killMarked(match func(string) bool, since uint64, self int) int {
	killed := make(map[int]uint64)
	for range 5 {
		n := 0
		for pid, ticks := range markedTree(match, since, self) {
			if t, done := killed[pid]; done && t == ticks {
				continue // signalled, not yet a zombie
			}
			if killVerified(pid, ticks) {
				killed[pid] = ticks
				n++
			}
		}
		if n == 0 {
			break
		}
	}
	return len(killed)
}

// markedTree returns the live processes carrying a matching marker, and
// their descendants, with their start times.
func markedTree(match func(string) bool, since uint64, self int) map[int]uint64 {
	stats := make(map[int]Stat)
	eachProcess(func(pid int, st Stat) {
		if !st.Dead() {
			stats[pid] = st
		}
	})
	// Never self, nor an ancestor of self (a parent that happens to carry
	// an old marker, e.g. tiny-go started from a command of another run).
	spare := map[int]bool{}
	for p := self; p > 1 && !spare[p]; p = stats[p].PPID {
		spare[p] = true
	}
	out := make(map[int]uint64)
	for pid, st := range stats {
		if spare[pid] || st.StartTicks < since {
			continue
		}
		if v, ok := markerOf(pid); ok && match(v) {
			out[pid] = st.StartTicks
		}
	}
	// Descendants: repeat until no new child of a marked process appears.
	for grew := true; grew; {
		grew = false
		for pid, st := range stats {
			if _, in := out[pid]; in || spare[pid] {
				continue
			}
			if _, parentIn := out[st.PPID]; parentIn {
				out[pid] = st.StartTicks
				grew = true
			}
		}
	}
	return out
}

// markerOf returns the MarkerVar value in the environment pid started with.
func markerOf(pid int) (string, bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return "", false
	}
	key := []byte(MarkerVar + "=")
	for entry := range bytes.SplitSeq(data, []byte{0}) {
		if v, ok := bytes.CutPrefix(entry, key); ok {
			return string(v), true
		}
	}
	return "", false
}

// killDescendants kills every live descendant of self.
func killDescendants(self int) int {
	stats := make(map[int]Stat)
	eachProcess(func(pid int, st Stat) {
		if !st.Dead() {
			stats[pid] = st
		}
	})
	n := 0
	for pid, st := range stats {
		for p, hops := st.PPID, 0; p > 1 && hops < 4096; p, hops = stats[p].PPID, hops+1 {
			if p == self {
				if killVerified(pid, st.StartTicks) {
					n++
				}
				break
			}
			if _, ok := stats[p]; !ok {
				break
			}
		}
	}
	return n
}

// HostPID is the pid, in this process's PID namespace, of the process whose
// pid in its own innermost namespace is nsPid and whose working directory
// is dir, or -1 when there is none. A command the sandbox runs in a PID
// namespace of its own knows only its innermost pid (its `$$` is 1): tests
// that have a command report its pid find it here.
func HostPID(nsPid int, dir string) int {
	found := -1
	eachProcess(func(pid int, _ Stat) {
		if found > 0 {
			return
		}
		status, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
		if err != nil {
			return
		}
		_, nspid, _ := strings.Cut(string(status), "NSpid:")
		nspid, _, _ = strings.Cut(nspid, "\n")
		f := strings.Fields(nspid)
		if len(f) == 0 || f[len(f)-1] != strconv.Itoa(nsPid) {
			return
		}
		if cwd, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/cwd"); err == nil && cwd == dir {
			found = pid
		}
	})
	return found
}
