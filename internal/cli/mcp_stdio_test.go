package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tiny-agent/tiny-go/internal/mcp"
	"github.com/tiny-agent/tiny-go/internal/providertest"
	"github.com/tiny-agent/tiny-go/internal/sandbox"
)

// pyCatalog writes a catalog whose server "py" is the SDK-less stdio server
// of internal/mcp/testdata in mode, and points TINY_MCP_CONFIG at it.
func pyCatalog(t *testing.T, c *cliRun, mode string, extra string) {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed")
	}
	script, err := filepath.Abs("../mcp/testdata/pyserver.py")
	if err != nil {
		t.Fatal(err)
	}
	args, _ := json.Marshal([]string{script, mode})
	catalog := filepath.Join(t.TempDir(), "mcp.json")
	data := `{"servers":{"py":{"command":` + strconv.Quote(py) + `,"args":` + string(args) +
		`,"passEnv":["MCP_TEST_DIR"],"allowedTools":["echo","env"]}` + extra + `}}`
	if err := os.WriteFile(catalog, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	c.env["TINY_MCP_CONFIG"] = catalog
	c.env["MCP_TEST_DIR"] = c.dir
	c.env["PATH"] = os.Getenv("PATH")
	c.env["HOME"] = os.Getenv("HOME")
}

// readPid reads the pid a test server wrote in the directory of path
// ($MCP_TEST_DIR) and returns it as this process sees it, or -1 when no
// such process is left: a server in a PID namespace of its own writes the
// pid it has there.
func readPid(t *testing.T, path string) int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if b, err := os.ReadFile(path); err == nil && len(b) > 0 {
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil {
				t.Fatal(err)
			}
			return hostPid(filepath.Dir(path), pid)
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s", path)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// namespaced reports whether commands run in PID namespaces of their own
// here (root, a kernel that allows them): what tiny-go leaves behind then
// dies with it instead of waiting for the next start.
func namespaced(t *testing.T) bool {
	t.Helper()
	sb, _, err := sandbox.New(sandbox.Policy{Mode: sandbox.Workspace, WorkDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	return sb.Namespaced()
}

// hostPid finds the process whose innermost pid is nsPid and whose
// environment holds MCP_TEST_DIR=dir; -1 when there is none.
func hostPid(dir string, nsPid int) int {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		status, err := os.ReadFile("/proc/" + e.Name() + "/status")
		if err != nil {
			continue
		}
		_, nspid, _ := strings.Cut(string(status), "NSpid:")
		nspid, _, _ = strings.Cut(nspid, "\n")
		f := strings.Fields(nspid)
		if len(f) == 0 || f[len(f)-1] != strconv.Itoa(nsPid) {
			continue
		}
		env, _ := os.ReadFile("/proc/" + e.Name() + "/environ")
		if slices.Contains(strings.Split(string(env), "\x00"), "MCP_TEST_DIR="+dir) {
			return pid
		}
	}
	return -1
}

// processGone: ended, or a zombie no one reaps (PID 1 here may not).
func processGone(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(fields) > 0 && (fields[0] == "Z" || fields[0] == "X")
}

func waitGone(t *testing.T, what string, pid int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !processGone(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("%s (pid %d) is still running", what, pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A stdio server's tools work through the agent, its environment never
// holds the model's key, and it is stopped when tiny-go exits.
func TestMCPStdioThroughTheAgent(t *testing.T) {
	echo, _ := mcp.ToolName("py", "echo")
	env, _ := mcp.ToolName("py", "env")
	provider := providertest.New(t,
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c1", echo, `{"text":"hi"}`), toolCall("c2", env, `{}`)}},
		providertest.Reply{Text: "done"},
	)
	c := newCLI(t, provider)
	c.env["OPENROUTER_API_KEY"] = "sk-or-stdio-key-0451"
	pyCatalog(t, c, "normal", "")
	code, stdout, stderr := c.main("", "--mcp", "py", "use the tools")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "MCP py: connected (2025-06-18, 2 tools)") || !strings.Contains(stdout, "done") {
		t.Errorf("stdout %q stderr %q", stdout, stderr)
	}
	file, _ := os.ReadFile(c.sessions()[0])
	if !strings.Contains(string(file), "py: hi") || !strings.Contains(string(file), "MCP_TEST_DIR=") {
		t.Errorf("the tool results are missing from the session")
	}
	log, _ := os.ReadFile(filepath.Join(c.dir, ".tiny-agent", "mcp", "py.log"))
	for what, s := range map[string]string{"the session": string(file), "the log": string(log)} {
		if strings.Contains(s, "sk-or-stdio-key-0451") || strings.Contains(s, "OPENROUTER_API_KEY") {
			t.Errorf("the model's key reached the server (seen in %s)", what)
		}
	}
	waitGone(t, "the server", readPid(t, filepath.Join(c.dir, "server.pid")))
}

// After a SIGKILL of tiny-go, the next start in the directory stops what
// its stdio server left running; the resumed run's own server is stopped
// when it exits.
func TestMCPStdioSIGKILLAndResume(t *testing.T) {
	c := newCLI(t, nil)
	pyCatalog(t, c, "spawn", "")
	killDuringRequest(t, c, "--cwd", c.dir, "--mcp", "py", "hello")
	server := readPid(t, filepath.Join(c.dir, "server.pid"))
	child := readPid(t, filepath.Join(c.dir, "child.pid"))
	waitGone(t, "the server leader", server) // Pdeathsig
	ns := namespaced(t)
	if ns {
		// The server's namespace died with its init: nothing is left.
		waitGone(t, "the server's child", child)
	} else if processGone(child) {
		t.Fatal("the server's child died with tiny-go: the resume proves nothing")
	}
	os.Remove(filepath.Join(c.dir, "server.pid"))
	os.Remove(filepath.Join(c.dir, "child.pid"))

	provider := providertest.New(t, providertest.Reply{Text: "recovered"}, providertest.Reply{Text: "resumed"})
	c.env["TINY_ENDPOINT"] = provider.URL()
	code, _, stderr := c.main("", "--mcp", "py", "--continue", "again")
	if code != 0 {
		t.Fatalf("resume: exit %d: %s", code, stderr)
	}
	if !ns && !strings.Contains(stderr, "left running by an earlier tiny-go in this directory that was killed") {
		t.Errorf("stderr %q", stderr)
	}
	waitGone(t, "the orphaned child", child)
	waitGone(t, "the resumed run's server", readPid(t, filepath.Join(c.dir, "server.pid")))
	waitGone(t, "the resumed run's child", readPid(t, filepath.Join(c.dir, "child.pid")))
}

// Ctrl+C while a server does not answer ends the start at once, stops the
// server and leaves no session file.
func TestMCPStdioInterruptWhileConnecting(t *testing.T) {
	c := newCLI(t, nil)
	pyCatalog(t, c, "silent", "")
	cmd := c.command("http://127.0.0.1:1", "--cwd", c.dir, "--mcp", "py", "hello")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	server := readPid(t, filepath.Join(c.dir, "server.pid"))
	time.Sleep(100 * time.Millisecond) // the handshake is under way
	began := time.Now()
	_ = cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	if d := time.Since(began); d > 5*time.Second {
		t.Errorf("exit took %v", d)
	}
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("exit: %v", err)
	}
	if got := strings.TrimSpace(stderr.String()); got != "tiny-go: MCP py: connecting: interrupted" {
		t.Errorf("stderr %q", got)
	}
	waitGone(t, "the server", server)
	if n := len(c.sessions()); n != 0 {
		t.Errorf("%d session files", n)
	}
}

func TestMCPList(t *testing.T) {
	c := newCLI(t, nil)
	pyCatalog(t, c, "normal", `,"down":{"url":"http://127.0.0.1:1/mcp","allowedTools":["x"]}`)

	code, stdout, stderr := c.main("", "mcp", "list")
	if code != 1 {
		t.Fatalf("exit %d (one server is down): %s %s", code, stdout, stderr)
	}
	rows := map[string]string{}
	for _, line := range strings.Split(stdout, "\n") {
		if f := strings.Fields(line); len(f) > 0 {
			rows[f[0]] = strings.Join(f, " ")
		}
	}
	for alias, want := range map[string]string{
		"ALIAS": "ALIAS TRANSPORT TARGET RESULT TOOLS SOURCE",
		"down":  "down http http://127.0.0.1:1/mcp failed x",
		"py":    "pyserver.py normal connected (2025-06-18) echo, env",
		"MCP":   "MCP down: connecting: cannot connect: connection refused",
	} {
		if !strings.Contains(rows[alias], want) {
			t.Errorf("row %s is %q, want it to hold %q", alias, rows[alias], want)
		}
	}
	if !strings.HasPrefix(rows["py"], "py stdio ") {
		t.Errorf("row py is %q", rows["py"])
	}

	code, stdout, _ = c.main("", "mcp", "list", "--json")
	var out struct {
		Catalog string `json:"catalog"`
		Servers []struct {
			Alias, Transport, Status, Protocol, Endpoint, Command string
			Args, AllowedTools                                    []string
			Error                                                 *struct{ Type, Message string }
		} `json:"servers"`
	}
	if err := json.Unmarshal([]byte(stdout), &out); err != nil || code != 1 || len(out.Servers) != 2 {
		t.Fatalf("exit %d, %v: %s", code, err, stdout)
	}
	down, py := out.Servers[0], out.Servers[1]
	if down.Alias != "down" || down.Transport != "http" || down.Status != "failed" || down.Error == nil || down.Error.Type != "connection_failed" {
		t.Errorf("down: %+v", down)
	}
	if py.Alias != "py" || py.Transport != "stdio" || py.Status != "connected" || py.Protocol != "2025-06-18" || strings.Join(py.AllowedTools, ",") != "echo,env" || py.Error != nil {
		t.Errorf("py: %+v", py)
	}
	waitGone(t, "the server", readPid(t, filepath.Join(c.dir, "server.pid")))

	delete(c.env, "TINY_MCP_CONFIG")
	if code, _, stderr := c.main("", "mcp", "list"); code != 2 || !strings.Contains(stderr, "no MCP servers are configured: add one with `tiny-go mcp add") {
		t.Errorf("without a catalog: exit %d, %q", code, stderr)
	}
}
