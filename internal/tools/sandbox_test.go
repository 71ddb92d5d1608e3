package tools

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tiny-agent/tiny-go/internal/sandbox"
)

// sandboxedTools builds every built-in confined to a working directory
// whose temporary, cache and home directories are its own, and returns a
// directory outside every writable root. opts change the policy.
func sandboxedTools(t *testing.T, mode sandbox.Mode, opts ...func(*sandbox.Policy)) (tools map[string]Tool, work, outside string) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	work, outside = filepath.Join(base, "work"), filepath.Join(base, "outside")
	tmp, home := filepath.Join(base, "tmp"), filepath.Join(base, "home")
	for _, d := range []string{work, outside, tmp, home} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	env := map[string]string{"TMPDIR": tmp, "HOME": home}
	p := sandbox.Policy{Mode: mode, WorkDir: work, Getenv: func(k string) string { return env[k] }}
	for _, o := range opts {
		o(&p)
	}
	sb, _, err := sandbox.New(p)
	if err != nil {
		t.Fatal(err)
	}
	m, err := NewManager(work)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		m.StopAll(context.Background())
		sb.Close()
	})
	list, err := Builtins(Config{WorkDir: work, Background: m, Sandbox: sb})
	if err != nil {
		t.Fatal(err)
	}
	tools = make(map[string]Tool)
	for _, tool := range list {
		tools[tool.Definition().Name] = tool
	}
	return tools, work, outside
}

func waitForFile(path string, within time.Duration) bool {
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if _, err := os.Lstat(path); err == nil {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false
}

func TestSandboxConfinesEveryTool(t *testing.T) {
	if sandbox.ABI() == 0 {
		t.Skip("this kernel has no Landlock")
	}
	tools, work, outside := sandboxedTools(t, sandbox.Workspace)
	out := func(name string) string { return filepath.Join(outside, name) }
	in := func(name string) string { return filepath.Join(work, name) }

	t.Run("bash", func(t *testing.T) {
		res := call(t, tools["bash"], map[string]any{"command": "echo x > " + out("bash")})
		if !res.IsError || fileExists(out("bash")) {
			t.Fatalf("bash wrote outside the roots: %+v", res)
		}
		if !strings.Contains(res.Content, "ermission denied") {
			t.Errorf("the refusal does not say why: %q", res.Content)
		}
		if res := call(t, tools["bash"], map[string]any{"command": "echo x > bash-in"}); res.IsError || !fileExists(in("bash-in")) {
			t.Fatalf("bash could not write in the working directory: %+v", res)
		}
	})
	t.Run("setsid grandchild", func(t *testing.T) {
		// The command waits for it: its namespace, where there is one,
		// ends with it.
		script := "setsid sh -c 'echo x > " + out("setsid") + "; echo x > setsid-done' & for i in $(seq 500); do [ -e setsid-done ] && break; sleep 0.01; done"
		if res := call(t, tools["bash"], map[string]any{"command": script}); res.IsError {
			t.Fatalf("bash: %+v", res)
		}
		if !waitForFile(in("setsid-done"), 10*time.Second) {
			t.Fatal("the setsid grandchild could not write in the working directory")
		}
		if fileExists(out("setsid")) {
			t.Fatal("a setsid grandchild wrote outside the roots")
		}
	})
	t.Run("bg", func(t *testing.T) {
		script := "echo x > " + out("bg") + "; echo x > bg-done"
		if res := call(t, tools["bg"], map[string]any{"action": "start", "command": script}); res.IsError {
			t.Fatalf("bg start: %+v", res)
		}
		if !waitForFile(in("bg-done"), 10*time.Second) {
			t.Fatal("the bg command could not write in the working directory")
		}
		if fileExists(out("bg")) {
			t.Fatal("a bg command wrote outside the roots")
		}
	})
	t.Run("write", func(t *testing.T) {
		res := call(t, tools["write"], map[string]any{"path": out("write"), "content": "x"})
		if !res.IsError || fileExists(out("write")) {
			t.Fatalf("write created a file outside the roots: %+v", res)
		}
		if !strings.Contains(res.Content, out("write")) || !strings.Contains(res.Content, "--writable "+outside) {
			t.Errorf("the refusal names neither the path nor the fix: %q", res.Content)
		}
		// Through a symlink inside the working directory.
		if err := os.Symlink(outside, in("link")); err != nil {
			t.Fatal(err)
		}
		if res := call(t, tools["write"], map[string]any{"path": "link/write", "content": "x"}); !res.IsError || fileExists(out("write")) {
			t.Fatalf("write followed a symlink out of the roots: %+v", res)
		}
		if res := call(t, tools["write"], map[string]any{"path": "sub/write", "content": "x"}); res.IsError || readFile(t, in("sub/write")) != "x" {
			t.Fatalf("write inside the working directory: %+v", res)
		}
	})
	t.Run("edit", func(t *testing.T) {
		writeFile(t, out("edit"), "old")
		writeFile(t, in("edit"), "old")
		edits := []map[string]string{{"oldText": "old", "newText": "new"}}
		res := call(t, tools["edit"], map[string]any{"path": out("edit"), "edits": edits})
		if !res.IsError || readFile(t, out("edit")) != "old" {
			t.Fatalf("edit changed a file outside the roots: %+v", res)
		}
		if !strings.Contains(res.Content, out("edit")) {
			t.Errorf("the refusal does not name the path: %q", res.Content)
		}
		if res := call(t, tools["edit"], map[string]any{"path": "edit", "edits": edits}); res.IsError || readFile(t, in("edit")) != "new" {
			t.Fatalf("edit inside the working directory: %+v", res)
		}
	})
}

func TestSandboxReadOnlyTools(t *testing.T) {
	if sandbox.ABI() == 0 {
		t.Skip("this kernel has no Landlock")
	}
	tools, work, _ := sandboxedTools(t, sandbox.ReadOnly)
	if res := call(t, tools["bash"], map[string]any{"command": "echo x > f"}); !res.IsError || fileExists(filepath.Join(work, "f")) {
		t.Fatalf("read-only: bash wrote in the working directory: %+v", res)
	}
	if res := call(t, tools["write"], map[string]any{"path": "f", "content": "x"}); !res.IsError || !strings.Contains(res.Content, "--sandbox workspace") {
		t.Fatalf("read-only: write was not refused with the fix: %+v", res)
	}
}

func fileExists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}
