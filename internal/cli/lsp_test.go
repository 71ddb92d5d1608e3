package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tiny-agent/tiny-go/internal/providertest"
)

// lspPath puts the language servers the tests use on PATH: gopls in
// GOBIN and pyright and typescript-language-server from
// internal/lsp/testdata (both installed by .ci/run).
func lspPath(t *testing.T) {
	t.Helper()
	extra := []string{}
	if abs, err := filepath.Abs("../lsp/testdata/node_modules/.bin"); err == nil {
		extra = append(extra, abs)
	}
	if out, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
		extra = append(extra, filepath.Join(strings.TrimSpace(string(out)), "bin"))
	}
	t.Setenv("PATH", strings.Join(append(extra, os.Getenv("PATH")), string(os.PathListSeparator)))
}

// lspProject writes a project whose bounds no server on a loaded
// machine reaches (the tests are about what the servers say, not how
// fast).
func lspProject(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	files[".tiny-agent/config.toml"] = "[lsp]\nwait = \"120s\"\nstart_wait = \"120s\"\n"
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func editArgs(t *testing.T, path, old, new string) string {
	t.Helper()
	data, err := json.Marshal(map[string]any{"path": path, "edits": []map[string]string{{"oldText": old, "newText": new}}})
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// toolResult is the content of the result of call id the model received.
func toolResult(t *testing.T, srv *providertest.Server, id string) string {
	t.Helper()
	for _, r := range srv.Requests() {
		for _, m := range r.Chat.Messages {
			if m.Role == "tool" && m.ToolCallID == id && m.Content != nil {
				return *m.Content
			}
		}
	}
	t.Fatalf("the model never received the result of %s", id)
	return ""
}

var lspCases = map[string]struct {
	program, file string
	files         map[string]string
	bad           string // a string put into an int variable on line 4
	old, new      string // an edit that makes it clean again
}{
	"go": {program: "gopls", file: "main.go",
		files: map[string]string{"go.mod": "module example.com/m\n\ngo 1.22\n"},
		bad:   "package main\n\nfunc main() {\n\tvar n int = \"x\"\n\t_ = n\n}\n", old: `"x"`, new: "2"},
	"python": {program: "pyright-langserver", file: "main.py",
		files: map[string]string{"pyrightconfig.json": "{}\n"},
		bad:   "def main() -> None:\n    pass\n\nn: int = \"x\"\n", old: `"x"`, new: "2"},
	"typescript": {program: "typescript-language-server", file: "main.ts",
		files: map[string]string{"tsconfig.json": `{"compilerOptions": {"strict": true}}` + "\n"},
		bad:   "export function main(): void {}\n\n\nlet n: number = \"x\";\nexport { n };\n", old: `"x"`, new: "2"},
}

// In each language, a write that puts a string into an int variable
// brings the server's error for that line to the model with the write's
// result; an edit that fixes it brings nothing. The real program, the
// real servers, the scripted model.
func TestLSPDiagnosticsReachTheModel(t *testing.T) {
	if testing.Short() {
		t.Skip("starts language servers")
	}
	lspPath(t)
	for name, c := range lspCases {
		t.Run(name, func(t *testing.T) {
			if _, err := exec.LookPath(c.program); err != nil {
				t.Skipf("%s is not on PATH (.ci/run installs it)", c.program)
			}
			dir := lspProject(t, c.files)
			srv := providertest.New(t,
				providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c1", "write", mustJSON(t, map[string]string{"path": c.file, "content": c.bad}))}},
				providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c2", "edit", editArgs(t, c.file, c.old, c.new))}},
				providertest.Reply{Text: "done"},
			)
			cmd := program(t, dir, srv, "--approval", "auto", "write it")
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("tiny-go: %v\n%s", err, stderr.String())
			}
			bad := toolResult(t, srv, "c1")
			if !strings.Contains(bad, "\n"+c.file+":4:") || !strings.Contains(bad, " error ") {
				logs, _ := filepath.Glob(filepath.Join(dir, ".tiny-agent", "lsp", "*.log"))
				for _, l := range logs {
					data, _ := os.ReadFile(l)
					t.Logf("%s:\n%s", l, data)
				}
				t.Fatalf("the write's result has no error for line 4:\n%s", bad)
			}
			if clean := toolResult(t, srv, "c2"); !strings.HasPrefix(clean, "Successfully") || strings.Contains(clean, "Diagnostics") || strings.Contains(clean, c.file+":") {
				t.Fatalf("the clean edit's result reports diagnostics:\n%s", clean)
			}
		})
	}
}

// A command that changes a source file brings what its server reports of
// it (the files are those the checkpoint recorded as changed).
func TestLSPDiagnosticsAfterACommand(t *testing.T) {
	if testing.Short() {
		t.Skip("starts language servers")
	}
	lspPath(t)
	if _, err := exec.LookPath("gopls"); err != nil {
		t.Skip("gopls is not on PATH (.ci/run installs it)")
	}
	files := map[string]string{"go.mod": "module example.com/m\n\ngo 1.22\n",
		"main.go":  "package main\n\nfunc main() {\n\tvar n int = 1\n\t_ = n\n}\n",
		"other.go": "package main\n\nvar untouched int = \"still wrong\"\n"}
	dir := lspProject(t, files)
	srv := providertest.New(t, bashCall(t, `sed -i 's/= 1/= "x"/' main.go`), providertest.Reply{Text: "done"})
	cmd := program(t, dir, srv, "--approval", "auto", "change it")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("tiny-go: %v\n%s", err, stderr.String())
	}
	got := toolResult(t, srv, "c1")
	if !strings.Contains(got, "\nmain.go:4:") || !strings.Contains(got, " error ") {
		t.Fatalf("the command's result has no error for main.go line 4:\n%s", got)
	}
	if strings.Contains(got, "other.go") {
		t.Fatalf("a file the command did not change is reported:\n%s", got)
	}
}

// The model asks: the diagnostics tool lists a file's errors (starting
// its server), then, without a path, those of every open file.
func TestLSPDiagnosticsTool(t *testing.T) {
	if testing.Short() {
		t.Skip("starts language servers")
	}
	lspPath(t)
	if _, err := exec.LookPath("gopls"); err != nil {
		t.Skip("gopls is not on PATH (.ci/run installs it)")
	}
	c := lspCases["go"]
	files := map[string]string{"go.mod": c.files["go.mod"], "main.go": c.bad}
	dir := lspProject(t, files)
	srv := providertest.New(t,
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c1", "diagnostics", `{"path":"main.go"}`)}},
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c2", "diagnostics", `{}`)}},
		providertest.Reply{Text: "done"},
	)
	cmd := program(t, dir, srv, "--approval", "auto", "check")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("tiny-go: %v\n%s", err, stderr.String())
	}
	for _, id := range []string{"c1", "c2"} {
		if got := toolResult(t, srv, id); !strings.HasPrefix(got, "main.go:4:14 error ") {
			t.Fatalf("diagnostics (%s) = %q", id, got)
		}
	}
}

// A SIGKILL of tiny-go while its language server runs leaves no process
// of the server behind (the servers run in the commands' containment).
func TestLSPServerDiesWithTinyGo(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills tiny-go")
	}
	lspPath(t)
	if _, err := exec.LookPath("gopls"); err != nil {
		t.Skip("gopls is not on PATH (.ci/run installs it)")
	}
	c := lspCases["go"]
	dir := lspProject(t, c.files)
	srv := providertest.New(t,
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c1", "write", mustJSON(t, map[string]string{"path": c.file, "content": c.bad}))}},
		bashCall(t, "touch $MARKS/ready; sleep 60"),
		providertest.Reply{Text: "never"},
	)
	// The marker is outside the tree: over the overlay, a running
	// command's writes reach the tree when it ends.
	marks := t.TempDir()
	cmd := program(t, dir, srv, "--approval", "auto", "write it")
	cmd.Env = append(cmd.Env, "MARKS="+marks)
	k := startKeeper(t, cmd)
	if !waitForPath(filepath.Join(marks, "ready"), 60*time.Second) {
		t.Fatal("the command after the write never ran")
	}
	servers := processesIn(dir, k.cmd.Process.Pid, k.child)
	if !strings.Contains(strings.Join(servers, " "), "gopls") {
		t.Fatalf("no gopls runs in %s: %q", dir, servers)
	}
	status := lspStatusOf(t, dir, srv)
	if !strings.Contains(status, "go          running  root ., pid ") || !strings.Contains(status, "tiny-go pid "+strconv.Itoa(k.child)) {
		t.Fatalf("tiny-go lsp status does not show gopls running:\n%s", status)
	}
	if err := syscall.Kill(k.child, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	k.waitGone(t, k.child)
	if status := lspStatusOf(t, dir, srv); !strings.Contains(status, "None runs now") {
		t.Fatalf("after the SIGKILL, tiny-go lsp status says:\n%s", status)
	}
	deadline := time.Now().Add(10 * time.Second)
	for left := servers; len(left) > 0; left = processesIn(dir, k.cmd.Process.Pid, k.child) {
		if time.Now().After(deadline) {
			t.Fatalf("10 s after the SIGKILL of tiny-go, still running in %s: %q", dir, left)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func lspStatusOf(t *testing.T, dir string, srv *providertest.Server) string {
	t.Helper()
	out, err := program(t, dir, srv, "lsp", "status").CombinedOutput()
	if err != nil {
		t.Fatalf("tiny-go lsp status: %v\n%s", err, out)
	}
	return string(out)
}

// processesIn scans /proc for live processes working in dir (or under
// it), other than those named, as "pid:name".
func processesIn(dir string, except ...int) []string {
	entries, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() || containsInt(except, pid) {
			continue
		}
		cwd, err := os.Readlink(filepath.Join("/proc", e.Name(), "cwd"))
		if err != nil || cwd != dir && !strings.HasPrefix(cwd, dir+"/") {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		if i := bytes.LastIndexByte(stat, ')'); i > 0 && i+2 < len(stat) && stat[i+2] == 'Z' {
			continue // a zombie is dead
		}
		comm, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "comm"))
		out = append(out, e.Name()+":"+strings.TrimSpace(string(comm)))
	}
	return out
}

func containsInt(list []int, v int) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// In a Go module with no gopls on PATH, `tiny-go lsp status` says gopls
// is missing and how to install it, and nothing of servers for languages
// the project does not use.
func TestLSPStatusNamesMissingServer(t *testing.T) {
	dir := lspProject(t, map[string]string{"go.mod": "module example.com/m\n\ngo 1.22\n", "main.go": "package main\n"})
	srv := providertest.New(t)
	cmd := program(t, dir, srv, "lsp", "status")
	cmd.Env = append(cmd.Env, "PATH="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("tiny-go lsp status: %v\n%s", err, out)
	}
	want := "Missing: gopls is not on PATH: install it with `go install golang.org/x/tools/gopls@latest`.\n"
	if !strings.Contains(string(out), want) {
		t.Fatalf("tiny-go lsp status does not say gopls is missing:\n%s", out)
	}
	if strings.Count(string(out), "Missing:") != 1 {
		t.Fatalf("hints for languages the project does not use:\n%s", out)
	}
}
