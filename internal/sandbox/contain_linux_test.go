package sandbox

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tiny-agent/tiny-go/internal/sandbox/nsinit"
)

// secretHolder is the test binary as a stand-in for tiny-go: it makes a
// key, keeps it in memory, makes itself non-dumpable as tiny-go does
// (secrets.ProtectMemory), prints its pid and the key, and waits.
func secretHolder() {
	var b [16]byte
	rand.Read(b[:])
	key := "sk-test-" + hex.EncodeToString(b[:])
	kept := []byte(key)
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		os.Exit(3)
	}
	fmt.Printf("%d %s\n", os.Getpid(), key)
	time.Sleep(time.Minute)
	fmt.Println(len(kept))
}

// memScan reads every readable mapping of /proc/<pid>/mem and reports
// "found" when the key, or the key reversed, is in it.
const memScan = `
import sys
pid, key = sys.argv[1], sys.argv[2].encode()
try:
    maps = open("/proc/%s/maps" % pid).read().splitlines()
    mem = open("/proc/%s/mem" % pid, "rb", 0)
except Exception as e:
    print("denied:", e)
    sys.exit(0)
for line in maps:
    f = line.split()
    if "r" not in f[1]:
        continue
    a, b = [int(x, 16) for x in f[0].split("-")]
    try:
        mem.seek(a)
        data = mem.read(b - a)
    except Exception:
        continue
    if key in data or key[::-1] in data:
        print("found")
        sys.exit(0)
print("not found")
`

// As root, a confined command cannot read tiny-go's memory, with PID
// namespaces and without (CAP_SYS_PTRACE is out of its bounding set),
// while the same scan run unconfined finds the key: the scan works.
func TestRootCannotReadTinyGoMemory(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the scan is about root")
	}
	if ABI() == 0 {
		t.Skip("no Landlock: commands are not confined")
	}
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed")
	}
	holder := exec.Command(os.Args[0])
	holder.Env = append(os.Environ(), "SANDBOX_TEST_HOLD_SECRET=1")
	out, err := holder.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { holder.Process.Kill(); holder.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	pid, key, _ := strings.Cut(strings.TrimSpace(line), " ")
	scan := func(s *Sandbox) string {
		t.Helper()
		cmd := exec.Command(python, "-c", memScan, pid, key)
		b, err := startOutput(s, cmd)
		if err != nil {
			t.Fatalf("scan: %v: %s", err, b)
		}
		return strings.TrimSpace(string(b))
	}
	if got := scan(nil); got != "found" {
		t.Fatalf("unconfined root scan: %q: the scan does not work", got)
	}
	for _, noNS := range []bool{false, true} {
		t.Run(fmt.Sprintf("namespaces=%v", !noNS), func(t *testing.T) {
			l := newLayout(t)
			s, _, err := New(Policy{Mode: Workspace, WorkDir: l.work, Getenv: l.getenv, NoNamespaces: noNS})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if got := scan(s); !strings.HasPrefix(got, "denied") {
				t.Fatalf("confined root scan: %q", got)
			}
		})
	}
}

// startOutput runs cmd through s and returns its combined output.
func startOutput(s *Sandbox, cmd *exec.Cmd) ([]byte, error) {
	var b strings.Builder
	cmd.Stdout, cmd.Stderr = &b, &b
	if err := s.Start(cmd); err != nil {
		return nil, err
	}
	err := cmd.Wait()
	return []byte(b.String()), err
}

// Inside the namespace a command is PID 1, its namespace ends with it,
// and .tiny-agent is read-only to it (and to write and edit, which run on
// the confining thread), while the rest of the workspace is not.
func TestCommandsAreContained(t *testing.T) { forEachInit(t, testContained) }

func testContained(t *testing.T) {
	// Not root, the namespaces are made in a user namespace: the same
	// containment (scripts/test-unprivileged runs this as cloudsdk).
	requireLandlock(t)
	l := newLayout(t)
	s, warning, err := New(Policy{Mode: Workspace, WorkDir: l.work, Getenv: l.getenv})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !s.Namespaced() || s.ReadOnlyState() == "" {
		t.Skipf("the kernel refused: %s", warning)
	}
	checkInit(t, s)
	run := func(script string) string {
		t.Helper()
		cmd := exec.Command("/bin/sh", "-c", script)
		cmd.Dir = l.work
		b, _ := startOutput(s, cmd)
		return strings.TrimSpace(string(b))
	}
	if got := run("echo $$ $PPID"); got != "1 0" {
		t.Fatalf("the command's pid and parent are %q, want 1 0: the namespace's first process", got)
	}
	if got := run("echo x > .tiny-agent/forged && echo wrote"); strings.Contains(got, "wrote") || !strings.Contains(got, "Read-only") {
		t.Fatalf("writing .tiny-agent: %q", got)
	}
	if got := run("echo x > mine && echo wrote"); got != "wrote" {
		t.Fatalf("writing the workspace: %q", got)
	}
	// As root the kernel refuses write and edit too (their thread's mount
	// namespace); other users cannot make one for it: CheckWrite refuses.
	forged := filepath.Join(l.work, ".tiny-agent", "forged")
	if os.Geteuid() == 0 {
		err = s.Do(func() error { return os.WriteFile(forged, nil, 0o600) })
	} else {
		err = s.CheckWrite(forged, forged)
	}
	if err == nil {
		t.Fatal("write and edit can write .tiny-agent")
	}
	// tiny-go itself still writes it.
	if err := os.WriteFile(filepath.Join(l.work, ".tiny-agent", "own"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	// A SIGTERM to the command's group ends the namespace at once, though
	// its first process (sleep, which dash executes in its place) has no
	// handler for it.
	cmd := exec.Command("/bin/sh", "-c", "sleep 300 & sleep 300")
	cmd.SysProcAttr = &unix.SysProcAttr{Setpgid: true}
	if err := s.Start(cmd); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	began := time.Now()
	if err := SignalGroup(cmd.Process.Pid, unix.SIGTERM); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if d := time.Since(began); d > 5*time.Second {
		t.Fatalf("SIGTERM took %v", d)
	}
}

// A command has a /proc of its own: it lists only the processes of its
// namespace, the command's first process is /proc/1, and neither tiny-go
// nor another process of the machine can be found, let alone read; the
// mounts that make this never show outside.
func TestCommandsHaveTheirOwnProc(t *testing.T) { forEachInit(t, testOwnProc) }

func testOwnProc(t *testing.T) {
	requireLandlock(t)
	l := newLayout(t)
	s := newSandbox(t, Policy{Mode: Workspace, WorkDir: l.work, Getenv: l.getenv})
	if !s.Namespaced() {
		t.Skip("the kernel refused namespaces")
	}
	checkInit(t, s)
	mountsBefore, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	other := exec.Command("sleep", "300")
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Process.Kill(); other.Wait() })
	self := os.Getpid()

	out, err := run(t, s, l.work, fmt.Sprintf(`sleep 30 & a=$!; sleep 30 & b=$!
ls /proc | grep -E '^[0-9]+$' | sort -n | tr '\n' ' '; echo
head -c 30 /proc/1/cmdline | tr '\0\n' '  '; echo
cat /proc/%d/mem 2>&1 >/dev/null | head -1
cat /proc/%d/status 2>&1 | head -1
grep -c . /proc/self/mountinfo >/dev/null && echo mountinfo
kill $a $b`, self, other.Process.Pid))
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) < 5 {
		t.Fatalf("output: %q", out)
	}
	pids := strings.Fields(lines[0])
	// sh (1), two sleeps, and the ls, grep, sort, tr of the pipeline.
	if len(pids) < 3 || len(pids) > 8 || pids[0] != "1" {
		t.Fatalf("/proc lists %v: want the namespace's few processes, from 1", pids)
	}
	for _, p := range pids {
		if p == fmt.Sprint(self) || p == fmt.Sprint(other.Process.Pid) {
			t.Fatalf("/proc lists %s, a process outside the namespace (tiny-go %d, other %d): %v", p, self, other.Process.Pid, pids)
		}
	}
	if !strings.HasPrefix(lines[1], "sh -c sleep 30 & a=$!") {
		t.Fatalf("/proc/1 is %q, want the command", lines[1])
	}
	for _, l := range lines[2:4] {
		if !strings.Contains(l, "No such file") {
			t.Fatalf("reading a process outside: %q", l)
		}
	}
	mountsAfter, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	if string(mountsBefore) != string(mountsAfter) {
		t.Fatalf("the command's mounts leaked out:\nbefore:\n%s\nafter:\n%s", mountsBefore, mountsAfter)
	}
}

// forEachInit runs test with the static init (where there is one) and
// with tiny-go's own binary as the init.
func forEachInit(t *testing.T, test func(*testing.T)) {
	for _, goInit := range []bool{false, true} {
		t.Run(map[bool]string{false: "init=static", true: "init=go"}[goInit], func(t *testing.T) {
			if !goInit && nsinit.Program() == nil {
				t.Skip("no static init on " + runtime.GOARCH)
			}
			goInitOnly = goInit
			t.Cleanup(func() { goInitOnly = false })
			test(t)
		})
	}
}

// checkInit fails unless s starts commands through the init asked for.
func checkInit(t *testing.T, s *Sandbox) {
	t.Helper()
	if static := s.spawner.cont.program != nil; static == goInitOnly {
		t.Fatalf("the static init is used: %v, want %v", static, !goInitOnly)
	}
}

// Not root: commands run in a user namespace of their own with the user's
// ids, with their own /proc, and .tiny-agent read-only. The test binary
// runs itself as nobody in a workspace nobody owns (userNSChild).
func TestUserNamespaceWhenNotRoot(t *testing.T) {
	forEachInit(t, func(t *testing.T) { testUserNamespace(t, "nobody") })
}

// The same for root without CAP_SYS_ADMIN (a container's root, usually):
// it cannot make the namespaces itself, but can in a user namespace of
// its own. The test binary runs as such a root through setpriv.
func TestUserNamespaceForRootWithoutCapSysAdmin(t *testing.T) {
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Skip("no setpriv (util-linux) to drop CAP_SYS_ADMIN")
	}
	forEachInit(t, func(t *testing.T) { testUserNamespace(t, "root-without-cap-sys-admin") })
}

func testUserNamespace(t *testing.T, who string) {
	asMe := os.Geteuid() != 0 // unprivileged already: the child runs as us
	if asMe && who != "nobody" {
		t.Skip("needs root: the case of root without CAP_SYS_ADMIN")
	}
	requireLandlock(t)
	base, err := os.MkdirTemp("", "sandbox-userns-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	const nobody = 65534
	bin := filepath.Join(base, "sandbox.test")
	self, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, self, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(base, nobody, nobody); err != nil && !asMe {
		t.Fatal(err)
	}
	cmd := exec.Command(bin)
	wantIDs := "1 65534 65534"
	switch {
	case asMe:
		wantIDs = fmt.Sprintf("1 %d %d", os.Getuid(), os.Getgid())
	case who == "nobody":
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody, Groups: []uint32{}}}
	default:
		cmd = exec.Command("setpriv", "--bounding-set", "-sys_admin", bin)
		wantIDs = "1 0 0"
	}
	cmd.Env = []string{"SANDBOX_TEST_USERNS=" + base, "PATH=" + os.Getenv("PATH"), fmt.Sprintf("SANDBOX_TEST_GOINIT=%v", goInitOnly)}
	out, err := cmd.CombinedOutput()
	if !strings.Contains(fmt.Sprint(err), "killed") {
		t.Fatalf("%v, want the child to SIGKILL itself: %s", err, out)
	}
	got := map[string]string{}
	for line := range strings.Lines(string(out)) {
		k, v, _ := strings.Cut(strings.TrimSpace(line), "=")
		got[k] = v
	}
	t.Logf("as %s:\n%s", who, out)
	if got["namespaced"] != "true" {
		t.Skipf("the kernel refused user namespaces: %s", got["warning"])
	}
	if got["warning"] != "" {
		t.Errorf("warning: %s", got["warning"])
	}
	if got["static"] != fmt.Sprint(!goInitOnly) {
		t.Errorf("the static init is used: %s, want %v", got["static"], !goInitOnly)
	}
	if got["ids"] != wantIDs {
		t.Errorf("pid, uid, gid of the command: %q, want %s", got["ids"], wantIDs)
	}
	if who != "nobody" && !strings.Contains(got["capadmin"], "no") {
		t.Errorf("the test process has CAP_SYS_ADMIN: %q", got["capadmin"])
	}
	pids := strings.Fields(got["proc"])
	if len(pids) == 0 || pids[0] != "1" || len(pids) > 6 || slices.Contains(pids, got["host"]) || slices.Contains(pids, fmt.Sprint(os.Getpid())) {
		t.Errorf("/proc lists %v (the sandboxed process is %s, the test %d)", pids, got["host"], os.Getpid())
	}
	for _, k := range []string{"parent", "self"} {
		if !strings.Contains(got[k], "No such file") {
			t.Errorf("%s: %q: a process outside the namespace is visible", k, got[k])
		}
	}
	if !strings.Contains(got["state"], "Read-only") {
		t.Errorf("writing .tiny-agent: %q", got["state"])
	}
	if got["hidden"] != "[]" {
		t.Errorf("a hidden file reads %q, want []", got["hidden"])
	}
	if got["work"] != "wrote" {
		t.Errorf("writing the workspace: %q", got["work"])
	}
	if !strings.Contains(got["outside"], "Permission denied") {
		t.Errorf("writing outside the roots: %q", got["outside"])
	}
	if got["sleepers"] != "3" {
		t.Fatalf("%s sleeps were running before the SIGKILL, want 3", got["sleepers"])
	}
	deadline := time.Now().Add(2 * time.Second)
	for len(sleepers(base)) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("2 s after a SIGKILL of the process that started them, sleeps %v survive", sleepers(base))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// userNSChild is TestUserNamespaceWhenNotRoot's side as nobody: it
// prints what commands see, one key=value line each.
func userNSChild(base string) {
	l := layout{work: filepath.Join(base, "work"), tmp: filepath.Join(base, "tmp"), home: filepath.Join(base, "home"), outside: filepath.Join(base, "outside")}
	for _, d := range []string{l.work, l.tmp, l.home, l.outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			fmt.Println("error=", err)
			return
		}
	}
	l.env = map[string]string{"TMPDIR": l.tmp, "HOME": l.home, "PATH": os.Getenv("PATH")}
	goInitOnly = os.Getenv("SANDBOX_TEST_GOINIT") == "true"
	// A hidden file (a Read deny rule): the Go init covers it, for the
	// one command that runs while hide is set (the others keep the
	// static init).
	hidden, hide := filepath.Join(l.work, "hidden.env"), false
	if err := os.WriteFile(hidden, []byte("s3cr3t"), 0o600); err != nil {
		fmt.Println("error=", err)
		return
	}
	s, warning, err := New(Policy{Mode: Workspace, WorkDir: l.work, Getenv: l.getenv, Hidden: func() []string {
		if !hide {
			return nil
		}
		return []string{hidden}
	}})
	if err != nil {
		fmt.Println("error=", err)
		return
	}
	defer s.Close()
	fmt.Printf("warning=%s\nnamespaced=%v\nhost=%d\n", warning, s.Namespaced(), os.Getpid())
	// CAP_SYS_ADMIN is bit 21 of CapEff.
	status, _ := os.ReadFile("/proc/self/status")
	_, capEff, _ := strings.Cut(string(status), "CapEff:")
	var eff uint64
	fmt.Sscanf(strings.TrimSpace(capEff), "%x", &eff)
	fmt.Printf("capadmin=%v\n", map[bool]string{true: "yes", false: "no"}[eff&(1<<21) != 0])
	if s.Namespaced() {
		fmt.Printf("static=%v\n", s.spawner.cont.program != nil)
	}
	run := func(key, script string) {
		cmd := exec.Command("/bin/sh", "-c", script)
		cmd.Dir = l.work
		out, _ := startOutput(s, cmd)
		fmt.Printf("%s=%s\n", key, strings.Join(strings.Fields(string(out)), " "))
	}
	run("ids", "echo $$ $(id -u) $(id -g)")
	run("proc", "ls /proc | grep -E '^[0-9]+$'")
	run("parent", fmt.Sprintf("cat /proc/%d/status 2>&1 | head -1", os.Getppid()))
	run("self", fmt.Sprintf("cat /proc/%d/status 2>&1 | head -1", os.Getpid()))
	run("state", "echo x > .tiny-agent/forged && echo wrote")
	run("work", "echo x > mine && echo wrote")
	run("outside", "echo x > "+l.outside+"/f && echo wrote")
	hide = true
	run("hidden", "echo \"[$(cat hidden.env)]\"")
	hide = false
	if !s.Namespaced() {
		return
	}
	// Detached sleeps, then a SIGKILL of this process: its launching
	// thread dies, the command's Pdeathsig fires, and the kernel ends the
	// namespace with everything in it.
	cmd := exec.Command("/bin/sh", "-c", "setsid sleep 301 & nohup sleep 302 >/dev/null 2>&1 & exec sleep 300")
	if err := s.Start(cmd); err != nil {
		fmt.Println("error=", err)
		return
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(sleepers(base)) < 3 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	fmt.Printf("sleepers=%d\n", len(sleepers(base)))
	syscall.Kill(os.Getpid(), syscall.SIGKILL)
}

// sleepers are the host pids of the sleep processes whose environment
// holds SANDBOX_TEST_USERNS=base.
func sleepers(base string) []string {
	var pids []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		cmdline, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || !strings.HasPrefix(string(cmdline), "sleep\x00") {
			continue
		}
		env, _ := os.ReadFile("/proc/" + e.Name() + "/environ")
		if slices.Contains(strings.Split(string(env), "\x00"), "SANDBOX_TEST_USERNS="+base) {
			pids = append(pids, e.Name())
		}
	}
	return pids
}

// Without namespaces (as where the kernel refuses them) the one warning
// line names what is lost, and commands do see the host's processes: what
// TestCommandsHaveTheirOwnProc asserts is not a given.
func TestWithoutNamespacesTheWarningNamesWhatIsLost(t *testing.T) {
	requireLandlock(t)
	l := newLayout(t)
	s, warning, err := New(Policy{Mode: Workspace, WorkDir: l.work, Getenv: l.getenv, NoNamespaces: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Namespaced() {
		t.Fatal("namespaces although disabled")
	}
	for _, want := range []string{"tiny-go: warning: no namespaces for commands (namespaces disabled)", "commands see tiny-go and every other process in /proc", "commands may outlive tiny-go"} {
		if !strings.Contains(warning, want) {
			t.Errorf("warning %q lacks %q", warning, want)
		}
	}
	if strings.Count(warning, "\n") != 0 {
		t.Errorf("warning is more than one line: %q", warning)
	}
	out, err := run(t, s, l.work, fmt.Sprintf("test -e /proc/%d && echo visible", os.Getpid()))
	if err != nil || strings.TrimSpace(out) != "visible" {
		t.Fatalf("without namespaces the test process should be visible: %v %q", err, out)
	}
}

// SignalGroup lets a command's first process act on a signal it handles
// (no SIGKILL behind its back), and ends one that does not handle it.
func TestSignalGroupRespectsHandlers(t *testing.T) {
	requireLandlock(t)
	l := newLayout(t)
	s := newSandbox(t, Policy{Mode: Workspace, WorkDir: l.work, Getenv: l.getenv})
	if !s.Namespaced() {
		t.Skip("the kernel refused namespaces")
	}
	for _, tc := range []struct {
		script string
		status string // as exec.ExitError prints it
		out    string
	}{
		{`trap 'echo handled; exit 3' TERM; echo ready; while :; do sleep 0.05; done`, "exit status 3", "ready\nhandled\n"},
		{`echo ready; exec sleep 300`, "signal: killed", "ready\n"},
	} {
		cmd := exec.Command("/bin/sh", "-c", tc.script)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		// A file, not a Builder: the command writes it directly, so
		// reading it while the command runs is no data race.
		f, err := os.CreateTemp(l.tmp, "out")
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		cmd.Stdout = f
		read := func() string { b, _ := os.ReadFile(f.Name()); return string(b) }
		if err := s.Start(cmd); err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(5 * time.Second); !strings.Contains(read(), "ready"); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the command never started")
			}
		}
		time.Sleep(50 * time.Millisecond) // sleep executed
		if err := SignalGroup(cmd.Process.Pid, syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if fmt.Sprint(err) != tc.status || read() != tc.out {
				t.Errorf("%s: %v, output %q; want %s, %q", tc.script, err, read(), tc.status, tc.out)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: still running 5 s after SIGTERM", tc.script)
		}
	}
}
