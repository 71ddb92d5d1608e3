package hooks

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tiny-agent/tiny-go/internal/sandbox"
)

// containedSandbox is a workspace sandbox of dir whose commands run in
// namespaces; the test is skipped where the kernel refuses them.
func containedSandbox(tb testing.TB, dir string) *sandbox.Sandbox {
	tb.Helper()
	sb, warning, err := sandbox.New(sandbox.Policy{Mode: sandbox.Workspace, WorkDir: dir})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(sb.Close)
	if !sb.Namespaced() {
		tb.Skipf("commands get no namespaces here: %s", warning)
	}
	return sb
}

// A hook started through the sandbox sees what a command sees: it is
// PID 1 of its namespace with no_new_privs, .tiny-agent is read-only to
// it, and the tree is written for real (no overlay). Its stdin, stdout,
// stderr, exit code and environment are a hook's as before.
func TestContainedHookKeepsItsProtocol(t *testing.T) {
	dir := t.TempDir()
	sb := containedSandbox(t, dir)
	h := Hook{Timeout: 10 * time.Second, Command: `read -r in; echo "in=$in pid=$$ ppid=$PPID $(grep NoNewPrivs /proc/self/status | tr -d '\t') env=$HOOK_TEST_VAR"
touch .tiny-agent/forged 2>/dev/null && echo "state writable"
echo tree > tree.txt
echo "to stderr" >&2; exit 2`}
	r := runCommand(context.Background(), h, dir, []string{"HOOK_TEST_VAR=v", "PATH=" + os.Getenv("PATH")}, []byte(`{"a":1}`+"\n"), sb.Start)
	if r.err != nil || r.code != 2 || strings.TrimSpace(string(r.stderr)) != "to stderr" {
		t.Fatalf("code %d, err %v, stderr %q", r.code, r.err, r.stderr)
	}
	if got, want := strings.TrimSpace(string(r.stdout)), `in={"a":1} pid=1 ppid=0 NoNewPrivs:1 env=v`; got != want {
		t.Fatalf("the hook saw %q, want %q", got, want)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "tree.txt")); err != nil || string(b) != "tree\n" {
		t.Fatalf("the hook's write to the tree: %q %v", b, err)
	}
}

// A contained hook that times out is killed with everything it started,
// even a process that left its group (setsid): the namespace ends with
// its first process.
func TestContainedHookTimeoutKillsDetached(t *testing.T) {
	dir := t.TempDir()
	sb := containedSandbox(t, dir)
	h := Hook{Timeout: 300 * time.Millisecond, Command: `setsid sh -c 'sleep 1; echo late > late.txt' & sleep 30`}
	began := time.Now()
	r := runCommand(context.Background(), h, dir, []string{"PATH=" + os.Getenv("PATH")}, nil, sb.Start)
	if !r.timedOut || r.err == nil {
		t.Fatalf("not timed out: %+v", r)
	}
	if d := time.Since(began); d > 3*time.Second {
		t.Fatalf("the timed-out hook took %v to end", d)
	}
	time.Sleep(1500 * time.Millisecond)
	if _, err := os.Stat(filepath.Join(dir, "late.txt")); err == nil {
		t.Fatal("a detached child of a timed-out hook survived it")
	}
}
