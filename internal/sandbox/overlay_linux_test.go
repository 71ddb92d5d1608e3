package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/tiny-agent/tiny-go/internal/overlay"
	"github.com/tiny-agent/tiny-go/internal/testenv"
)

// overlayScript writes, deletes, tries .tiny-agent, looks at the
// transaction directory through the read-only state directory, and walks
// the whole tree, .tiny-agent included: the command has no capability, so
// a directory of tiny-go's it cannot read (the overlay's work/work, mode
// 000 from the kernel) would fail find, gofmt -l or grep -r.
const overlayScript = `echo new > new.txt && rm old.txt && chmod 700 sub && echo uid=$(id -u)
(echo x > .tiny-agent/x) 2>&1 | sed 's/^/state=/'
ls .tiny-agent/tx 2>&1 | sed 's/^/tx=/'
cat old.txt 2>&1 | sed 's/^/old=/'
echo walk=$(find . 2>&1 >/dev/null; echo $?)
echo grep=$(grep -r -q nothing-matches-this . 2>&1; echo $?)`

// overlayRun runs overlayScript over an overlay of base/work through a
// sandbox and applies what it changed; it reports key=value lines.
func overlayRun(base string) string {
	var b strings.Builder
	work := filepath.Join(base, "work")
	for _, step := range []error{
		os.MkdirAll(filepath.Join(work, "sub"), 0o755),
		os.WriteFile(filepath.Join(work, "old.txt"), []byte("old\n"), 0o644),
	} {
		if step != nil {
			return "error=" + step.Error()
		}
	}
	sb, warning, err := New(Policy{WorkDir: work, Getenv: func(string) string { return "" }})
	if err != nil {
		return "error=" + err.Error()
	}
	defer sb.Close()
	fmt.Fprintf(&b, "warning=%s\nrefusal=%v\nstatic=%v\n", warning, sb.OverlayRefusal(), sb.spawner.cont.program != nil)
	tx, err := overlay.Begin(filepath.Join(work, ".tiny-agent", "tx"), work, "t1")
	if err != nil {
		return b.String() + "error=" + err.Error()
	}
	cmd := exec.Command("/bin/sh", "-c", overlayScript)
	cmd.Dir = work
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := sb.StartOverlay(cmd, Overlay{Lower: work, Upper: tx.Upper(), Work: tx.Work()}); err != nil {
		return b.String() + "error=" + err.Error()
	}
	err = cmd.Wait()
	fmt.Fprintf(&b, "%sexit=%v\n", out.String(), err)
	if _, err := os.Stat(filepath.Join(work, "new.txt")); err == nil {
		b.WriteString("leaked=the command wrote the tree itself\n")
	}
	changes, err := tx.Changes()
	if err == nil {
		_, err = tx.Apply(changes)
	}
	data, _ := os.ReadFile(filepath.Join(work, "new.txt"))
	_, oldErr := os.Stat(filepath.Join(work, "old.txt"))
	fi, _ := os.Stat(filepath.Join(work, "sub"))
	fmt.Fprintf(&b, "apply=%v\nnew=%s\noldGone=%v\nsubMode=%v\n", err, strings.TrimSpace(string(data)), os.IsNotExist(oldErr), fi.Mode().Perm())
	return b.String()
}

func checkOverlayRun(t *testing.T, out string, uid int) {
	t.Helper()
	got := map[string]string{}
	for line := range strings.Lines(out) {
		k, v, _ := strings.Cut(strings.TrimSpace(line), "=")
		got[k] = v
	}
	t.Logf("%s", out)
	for k, want := range map[string]string{"static": fmt.Sprint(!goInitOnly), "exit": "<nil>", "apply": "<nil>", "new": "new", "oldGone": "true", "subMode": "-rwx------", "tx": "t1", "old": "cat: old.txt: No such file or directory", "uid": fmt.Sprint(uid), "refusal": "<nil>", "walk": "0", "grep": "1"} {
		if got[k] != want {
			t.Errorf("%s = %q, want %q", k, got[k], want)
		}
	}
	if !strings.Contains(got["state"], "Read-only") {
		t.Errorf("writing .tiny-agent over the overlay: %q", got["state"])
	}
	if got["leaked"] != "" || got["error"] != "" {
		t.Errorf("leaked %q error %q", got["leaked"], got["error"])
	}
}

// A command over an overlay writes only its upper layer; .tiny-agent
// stays read-only and shows the transaction directory (no ELOOP); Apply
// then brings the changes in. As root, with the real kernel.
func TestCommandOverOverlay(t *testing.T) {
	requireLandlock(t)
	if os.Geteuid() != 0 {
		t.Skip("the root case; TestCommandOverOverlayInUserNamespace covers the rest")
	}
	forEachInit(t, func(t *testing.T) {
		// Outside the temporary directory, a writable root of its own
		// that would hide a working tree the command cannot write.
		base, err := filepath.EvalSymlinks(testenv.WorkDir(t))
		if err != nil {
			t.Fatal(err)
		}
		checkOverlayRun(t, overlayRun(base), 0)
	})
}

// The same as an unprivileged user: the command's user namespace mounts
// the overlay (userxattr), whiteouts are the kernel's 0:0 devices.
func TestCommandOverOverlayInUserNamespace(t *testing.T) {
	requireLandlock(t)
	if os.Geteuid() != 0 {
		// Unprivileged already (scripts/test-unprivileged): as ourselves.
		forEachInit(t, func(t *testing.T) {
			base, err := filepath.EvalSymlinks(testenv.WorkDir(t))
			if err != nil {
				t.Fatal(err)
			}
			checkOverlayRun(t, overlayRun(base), os.Getuid())
		})
		return
	}
	forEachInit(t, testOverlayInUserNamespace)
}

func testOverlayInUserNamespace(t *testing.T) {
	const nobody = 65534
	base := testenv.WorkDir(t)
	bin := filepath.Join(base, "sandbox.test")
	self, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, self, 0o755); err != nil {
		t.Fatal(err)
	}
	os.Chmod(base, 0o755)
	if err := os.Chown(base, nobody, nobody); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody, Groups: []uint32{}}}
	cmd.Env = []string{"SANDBOX_TEST_OVERLAY=" + base, "PATH=" + os.Getenv("PATH"), fmt.Sprintf("SANDBOX_TEST_GOINIT=%v", goInitOnly),
		"HOME=" + base} // its state key: nobody has no home of its own
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	checkOverlayRun(t, string(out), nobody)
}

// BenchmarkStartOverlay: `sh -c :` through the init, with and without an
// overlay of the working directory (the mount, and its teardown with the
// namespace, are the difference).
func BenchmarkStartOverlay(b *testing.B) {
	if os.Geteuid() != 0 || ABI() == 0 {
		b.Skip("needs root and Landlock")
	}
	work := b.TempDir()
	sb, _, err := New(Policy{WorkDir: work, Getenv: func(string) string { return "" }})
	if err != nil {
		b.Fatal(err)
	}
	defer sb.Close()
	n := 0
	var phases [3]time.Duration
	for _, ov := range []bool{false, true} {
		b.Run(map[bool]string{false: "plain", true: "overlay"}[ov], func(b *testing.B) {
			for b.Loop() {
				n++
				i := n
				cmd := exec.Command("/bin/sh", "-c", ":")
				cmd.Dir = work
				cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
				var err error
				if ov {
					t0 := time.Now()
					tx, berr := overlay.Begin(filepath.Join(work, ".tiny-agent", "tx"), work, fmt.Sprint("t", i))
					if berr != nil {
						b.Fatal(berr)
					}
					t1 := time.Now()
					err = sb.StartOverlay(cmd, Overlay{Lower: work, Upper: tx.Upper(), Work: tx.Work()})
					if err == nil {
						err = cmd.Wait()
					}
					t2 := time.Now()
					tx.Discard()
					phases[0] += t1.Sub(t0)
					phases[1] += t2.Sub(t1)
					phases[2] += time.Since(t2)
				} else if err = sb.Start(cmd); err == nil {
					err = cmd.Wait()
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			if ov {
				b.ReportMetric(float64(phases[0].Microseconds())/float64(b.N), "begin-µs/op")
				b.ReportMetric(float64(phases[1].Microseconds())/float64(b.N), "run-µs/op")
				b.ReportMetric(float64(phases[2].Microseconds())/float64(b.N), "discard-µs/op")
				phases = [3]time.Duration{}
			}
		})
	}
}

// The rights the init grants beneath the overlay are the ones the
// command's ruleset handles: the kernel refuses a rule granting more, and
// the init would then fail every command.
func TestOverlayRightsAreTheRulesets(t *testing.T) {
	requireLandlock(t)
	work := testenv.WorkDir(t)
	sb, _, err := New(Policy{WorkDir: work, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	c := sb.spawner.cont
	if ABI() >= 2 && c.fsMask == 0 {
		t.Fatalf("no rights to grant beneath the overlay on Landlock ABI %d", ABI())
	}
	rs, err := c.newRuleset()
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	dir, err := os.Open(work)
	if err != nil {
		t.Fatal(err)
	}
	defer dir.Close()
	add := func(rights uint64) error {
		attr := unix.LandlockPathBeneathAttr{Allowed_access: rights, Parent_fd: int32(dir.Fd())}
		_, _, e := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, rs.Fd(), unix.LANDLOCK_RULE_PATH_BENEATH, uintptr(unsafe.Pointer(&attr)), 0, 0, 0)
		if e != 0 {
			return e
		}
		return nil
	}
	if c.fsMask != 0 {
		if err := add(c.fsMask); err != nil {
			t.Fatalf("the ruleset refuses the rights %#x: %v", c.fsMask, err)
		}
	}
	if err := add(c.fsMask | unix.LANDLOCK_ACCESS_FS_EXECUTE); err == nil {
		t.Fatal("the ruleset takes a right it does not handle: the check above proves nothing")
	}
}

// BenchmarkCommandRuleset: the ruleset of its own each command over an
// overlay gets (what the fix of issue 41 adds to a command's start, with
// the init's one more open and landlock_add_rule).
func BenchmarkCommandRuleset(b *testing.B) {
	if ABI() == 0 {
		b.Skip("needs Landlock")
	}
	sb, _, err := New(Policy{WorkDir: b.TempDir(), Getenv: os.Getenv})
	if err != nil {
		b.Fatal(err)
	}
	defer sb.Close()
	for b.Loop() {
		rs, err := sb.spawner.cont.newRuleset()
		if err != nil {
			b.Fatal(err)
		}
		rs.Close()
	}
}

// In read-only mode the tree stays unwritable over an overlay too: the
// init grants nothing beneath it (plan mode's commands run this way).
func TestReadOnlyOverlayRefusesWrites(t *testing.T) {
	requireLandlock(t)
	base := testenv.WorkDir(t)
	work, scratch := filepath.Join(base, "work"), filepath.Join(base, "scratch")
	for _, d := range []string{work, scratch} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	forEachInit(t, func(t *testing.T) {
		for _, mode := range []Mode{ReadOnly, Workspace} {
			sb, _, err := New(Policy{Mode: mode, WorkDir: work, Scratch: scratch, Getenv: func(string) string { return "" }})
			if err != nil {
				t.Fatal(err)
			}
			tx, err := overlay.Begin(filepath.Join(work, ".tiny-agent", "tx"), work, "t-"+string(mode))
			if err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command("/bin/sh", "-c", "echo x > new.txt")
			cmd.Dir = work
			var out strings.Builder
			cmd.Stderr = &out
			if err := sb.StartOverlay(cmd, Overlay{Lower: work, Upper: tx.Upper(), Work: tx.Work()}); err != nil {
				t.Fatal(err)
			}
			err = cmd.Wait()
			changes, _ := tx.Changes()
			tx.Discard()
			sb.Close()
			if mode == ReadOnly && (err == nil || !strings.Contains(out.String(), "Permission denied") || len(changes) != 0) {
				t.Fatalf("read-only: %v, %q, changes %v; want Permission denied and no change", err, out.String(), changes)
			}
			if mode == Workspace && (err != nil || len(changes) != 1) {
				t.Fatalf("workspace: %v, %q, changes %v; want new.txt", err, out.String(), changes)
			}
		}
	})
}
