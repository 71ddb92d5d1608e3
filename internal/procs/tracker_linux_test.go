package procs

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
)

// sleeper starts `sleep <unique seconds>` the way a command's leftover
// would run, with extra environment, and returns its pid and the command
// line to look for.
func sleeper(t *testing.T, env []string, attr *syscall.SysProcAttr) (int, string) {
	t.Helper()
	secs := strconv.Itoa(100000 + rand.IntN(800000))
	cmd := exec.Command("sleep", secs)
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = attr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	go cmd.Wait() // reap it whoever kills it
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	return pid, "sleep " + secs
}

// liveCmdline reports whether a live process has exactly this command line.
func liveCmdline(cmdline string) bool {
	want := []byte(strings.ReplaceAll(cmdline, " ", "\x00") + "\x00")
	found := false
	eachProcess(func(pid int, st Stat) {
		if st.Dead() {
			return
		}
		if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); err == nil && bytes.Equal(b, want) {
			found = true
		}
	})
	return found
}

// gone waits for no live process to have cmdline.
func gone(cmdline string) bool {
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if !liveCmdline(cmdline) {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false
}

// startShell runs script with sh -c carrying marker, and returns the pid
// the script prints (the escapee it starts) once the shell has exited.
func startShell(t *testing.T, marker, script string) int {
	t.Helper()
	cmd := exec.Command("sh", "-c", script)
	cmd.Env = append(os.Environ(), marker)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatalf("script printed %q", out)
	}
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	return pid
}

func TestKillMarkedKillsWhatLeftTheGroup(t *testing.T) {
	tr, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	marker := tr.NewMarker()
	secs := strconv.Itoa(100000 + rand.IntN(800000))
	// A setsid grandchild and a double-forked one, both outside the group.
	startShell(t, marker, "setsid sleep "+secs+" >/dev/null 2>&1 & echo $!")
	startShell(t, marker, "(sh -c 'sleep "+secs+"1 >/dev/null 2>&1 & echo $!' &) | head -1")
	// The pids are printed when forked, maybe before sleep is exec'd.
	deadline := time.Now().Add(5 * time.Second)
	for !(liveCmdline("sleep "+secs) && liveCmdline("sleep "+secs+"1")) {
		if time.Now().After(deadline) {
			t.Fatal("the escapees did not start")
		}
		time.Sleep(10 * time.Millisecond)
	}
	_, other := sleeper(t, []string{tr.NewMarker()}, &syscall.SysProcAttr{Setsid: true}) // another command
	_, unrelated := sleeper(t, nil, nil)
	if n := tr.KillMarked(marker); n < 2 {
		t.Errorf("KillMarked killed %d processes, want at least 2", n)
	}
	if !gone("sleep "+secs) || !gone("sleep "+secs+"1") {
		t.Fatal("an escapee of the command survived KillMarked")
	}
	if !liveCmdline(other) || !liveCmdline(unrelated) {
		t.Fatal("KillMarked killed a process of another command or an unrelated one")
	}
	// Close ends the rest of the run, and only the run.
	tr.Close()
	if !gone(other) {
		t.Fatal("Close left a process of the run running")
	}
	if !liveCmdline(unrelated) {
		t.Fatal("Close killed an unrelated process")
	}
}

// deadOwner returns the pid and start time of a process that has exited:
// the tiny-go of a run that was killed.
func deadOwner(t *testing.T) (int, uint64) {
	t.Helper()
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	st, err := ReadStat(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Process.Kill()
	cmd.Wait()
	return cmd.Process.Pid, st.StartTicks
}

func writeRecord(t *testing.T, dir string, rec record) string {
	t.Helper()
	procsDir := filepath.Join(dir, ".tiny-agent", "procs")
	if err := os.MkdirAll(procsDir, 0o700); err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(procsDir, rec.Run+".json")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestReapStaleKillsWhatAKilledRunLeft(t *testing.T) {
	dir := t.TempDir()
	os.Chmod(dir, 0o700)
	ownerPID, ownerTicks := deadOwner(t)
	run := "deadbeefdeadbeef"
	// A recorded group whose leader still runs, and an escapee that only
	// the marker identifies.
	leader, leaderCmd := sleeper(t, nil, &syscall.SysProcAttr{Setpgid: true})
	st, err := ReadStat(leader)
	if err != nil {
		t.Fatal(err)
	}
	_, escapee := sleeper(t, []string{MarkerVar + "=" + run + ".3"}, &syscall.SysProcAttr{Setsid: true})
	path := writeRecord(t, dir, record{Run: run, PID: ownerPID, StartTicks: ownerTicks,
		Groups: []group{{PGID: leader, StartTicks: st.StartTicks}}})
	n, err := ReapStale(dir)
	if err != nil {
		t.Fatal(err)
	}
	if n < 2 {
		t.Errorf("ReapStale killed %d processes, want 2", n)
	}
	if !gone(leaderCmd) || !gone(escapee) {
		t.Fatal("ReapStale left a process of the killed run running")
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatal("the stale record was not removed")
	}
}

func TestReapStaleNeverSignalsARecycledPID(t *testing.T) {
	dir := t.TempDir()
	os.Chmod(dir, 0o700)
	ownerPID, ownerTicks := deadOwner(t)
	// The recorded pgid now names another process group (same number,
	// another start time), and a process carries another run's marker.
	victim, victimCmd := sleeper(t, nil, &syscall.SysProcAttr{Setpgid: true})
	st, err := ReadStat(victim)
	if err != nil {
		t.Fatal(err)
	}
	_, otherRun := sleeper(t, []string{MarkerVar + "=0123456789abcdef.1"}, &syscall.SysProcAttr{Setsid: true})
	writeRecord(t, dir, record{Run: "feedfacefeedface", PID: ownerPID, StartTicks: ownerTicks,
		Groups: []group{{PGID: victim, StartTicks: st.StartTicks - 1}}})
	// A record whose owner is alive (this process) is not touched either.
	self, err := ReadStat(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	live := writeRecord(t, dir, record{Run: "0123456789abcdef", PID: os.Getpid(), StartTicks: self.StartTicks})
	if n, err := ReapStale(dir); err != nil || n != 0 {
		t.Fatalf("ReapStale = %d, %v; want nothing killed", n, err)
	}
	time.Sleep(50 * time.Millisecond)
	if !liveCmdline(victimCmd) {
		t.Fatal("a recycled process group was signalled")
	}
	if !liveCmdline(otherRun) {
		t.Fatal("a process of a live run was signalled")
	}
	if _, err := os.Stat(live); err != nil {
		t.Fatal("the record of a live run was removed")
	}
}

func TestRecordIsPrivate(t *testing.T) {
	dir := t.TempDir()
	tr, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".tiny-agent")); !os.IsNotExist(err) {
		t.Fatal("a run without commands left a record")
	}
	tr.NewMarker()
	entries, err := os.ReadDir(filepath.Join(dir, ".tiny-agent", "procs"))
	if err != nil || len(entries) != 1 {
		t.Fatalf("records: %v %v", entries, err)
	}
	fi, err := os.Stat(filepath.Join(dir, ".tiny-agent", "procs", entries[0].Name()))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("record mode %v, %v", fi.Mode(), err)
	}
	tr.Close()
	if entries, _ := os.ReadDir(filepath.Join(dir, ".tiny-agent", "procs")); len(entries) != 0 {
		t.Fatal("Close left the record")
	}
}

// HostPID finds a process by its innermost pid and working directory, in
// a PID namespace of its own (as root) and without one.
func TestHostPID(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	start := func(flags uintptr) *exec.Cmd {
		cmd := exec.Command("sleep", "30")
		cmd.Dir = dir
		cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: flags}
		if err := cmd.Start(); err != nil {
			t.Skipf("cannot start: %v", err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		return cmd
	}
	plain := start(0)
	if got := HostPID(plain.Process.Pid, dir); got != plain.Process.Pid {
		t.Errorf("HostPID(%d) = %d", plain.Process.Pid, got)
	}
	if got := HostPID(plain.Process.Pid, "/"); got != -1 {
		t.Errorf("HostPID in another directory = %d, want -1", got)
	}
	if os.Geteuid() != 0 {
		return
	}
	ns := start(syscall.CLONE_NEWPID)
	if got := HostPID(1, dir); got != ns.Process.Pid {
		t.Errorf("HostPID(1) = %d, want %d, the namespace's first process", got, ns.Process.Pid)
	}
}
