package sandbox

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/overlay"
)

// confinementScript prints the capability lines of the command's status,
// whether a FIFO and a socket can still be made (they must) and whether a
// block device can (it must not).
const confinementScript = `grep -E '^(Cap(Inh|Prm|Eff|Bnd|Amb)|NoNewPrivs|Seccomp):' /proc/self/status
mkfifo fifo && echo fifo=ok
python3 -c 'import socket; socket.socket(socket.AF_UNIX).bind("sock")' 2>/dev/null && echo socket=ok
mknod blk b 7 0 2>/dev/null || echo block=refused`

var wantConfined = []string{"CapInh:\t0000000000000000", "CapPrm:\t0000000000000000", "CapEff:\t0000000000000000",
	"CapBnd:\t0000000000000000", "CapAmb:\t0000000000000000", "NoNewPrivs:\t1", "Seccomp:\t2",
	"fifo=ok", "block=refused"}

// A root command has no capability left in any set, no_new_privs, and the
// seccomp filter, through either init and without namespaces (then from
// the confining thread); FIFOs still work.
func TestCommandsHaveNoCapabilities(t *testing.T) {
	if os.Geteuid() != 0 || ABI() == 0 {
		t.Skip("needs root and Landlock")
	}
	run := func(t *testing.T, noNS bool) {
		l := newLayout(t)
		s, _, err := New(Policy{Mode: Workspace, WorkDir: l.work, Getenv: l.getenv, NoNamespaces: noNS})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if s.Namespaced() == noNS {
			t.Fatalf("namespaced: %v", s.Namespaced())
		}
		cmd := exec.Command("/bin/sh", "-c", confinementScript)
		cmd.Dir = l.work
		b, err := startOutput(s, cmd)
		if err != nil {
			t.Fatalf("%v: %s", err, b)
		}
		want := wantConfined
		if _, err := exec.LookPath("python3"); err == nil {
			want = append(want, "socket=ok")
		}
		for _, w := range want {
			if !strings.Contains(string(b), w) {
				t.Errorf("missing %q in:\n%s", w, b)
			}
		}
	}
	forEachInit(t, func(t *testing.T) { run(t, false) })
	t.Run("namespaces=false", func(t *testing.T) { run(t, true) })
}

// The overlay and the read-only state directory are mounted nosuid and
// nodev for the command, through either init.
func TestOverlayMountsAreNosuidNodev(t *testing.T) {
	forEachInit(t, func(t *testing.T) {
		if os.Geteuid() != 0 || ABI() == 0 {
			t.Skip("needs root and Landlock")
		}
		work := filepath.Join(t.TempDir(), "work")
		if err := os.Mkdir(work, 0o755); err != nil {
			t.Fatal(err)
		}
		sb, _, err := New(Policy{WorkDir: work, Getenv: func(string) string { return "" }})
		if err != nil {
			t.Fatal(err)
		}
		defer sb.Close()
		checkInit(t, sb)
		tx, err := overlay.Begin(filepath.Join(work, ".tiny-agent", "tx"), work, "t1")
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Discard()
		// Field 5 of mountinfo is the mount point, field 6 its options.
		script := fmt.Sprintf(`awk '$5 == %q || $5 == %q { print $5, $6 }' /proc/self/mountinfo`, work, filepath.Join(work, ".tiny-agent"))
		cmd := exec.Command("/bin/sh", "-c", script)
		cmd.Dir = work
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
		var out strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := sb.StartOverlay(cmd, Overlay{Lower: work, Upper: tx.Upper(), Work: tx.Work()}); err != nil {
			t.Fatal(err)
		}
		if err := cmd.Wait(); err != nil {
			t.Fatalf("%v: %s", err, out.String())
		}
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		if len(lines) < 2 {
			t.Fatalf("want the overlay and .tiny-agent in mountinfo, got:\n%s", out.String())
		}
		for _, l := range lines {
			if !strings.Contains(l, "nosuid") || !strings.Contains(l, "nodev") {
				t.Errorf("mounted without nosuid,nodev: %s", l)
			}
		}
	})
}

// The filter fits what the static init reads of it.
func TestSeccompFilterFitsTheInit(t *testing.T) {
	n := len(seccompBytes(seccompFilter()))
	if n >= maxFilterBytes {
		t.Fatalf("the filter is %d bytes; the init reads fewer than %d", n, maxFilterBytes)
	}
	t.Logf("filter: %d instructions", n/8)
}

// A server (an MCP stdio server, a language server) starts the same way
// as a command: no capability, no_new_privs, the seccomp filter.
func TestServersRunConfined(t *testing.T) {
	if os.Geteuid() != 0 || ABI() == 0 {
		t.Skip("needs root and Landlock")
	}
	l := newLayout(t)
	s := newSandbox(t, Policy{Mode: Workspace, WorkDir: l.work, Getenv: l.getenv})
	cmd := exec.Command("/bin/sh", "-c", confinementScript)
	cmd.Dir = l.work
	stdin, stdout, err := s.StartServer(cmd)
	if err != nil {
		t.Fatal(err)
	}
	stdin.Close()
	b, _ := io.ReadAll(stdout)
	stdout.Close()
	cmd.Wait()
	for _, w := range wantConfined {
		if !strings.Contains(string(b), w) {
			t.Errorf("missing %q in:\n%s", w, b)
		}
	}
}
