package mcp

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/tiny-agent/tiny-go/internal/procs"
	"github.com/tiny-agent/tiny-go/internal/sandbox"
)

// The official SDK's stdio server (testdata/stdioserver), built once.
var stdioServerBuild struct {
	once sync.Once
	path string
	err  error
}

func sdkStdioServer(t *testing.T) string {
	t.Helper()
	b := &stdioServerBuild
	b.once.Do(func() {
		dir, err := os.MkdirTemp("", "mcp-stdioserver-")
		if err != nil {
			b.err = err
			return
		}
		b.path = filepath.Join(dir, "stdioserver")
		out, err := exec.Command("go", "build", "-o", b.path, "./testdata/stdioserver").CombinedOutput()
		if err != nil {
			b.err = &buildError{string(out)}
		}
	})
	if b.err != nil {
		t.Fatalf("building the SDK stdio server: %v", b.err)
	}
	return b.path
}

type buildError struct{ out string }

func (e *buildError) Error() string { return e.out }

// pyServer is the SDK-less server testdata/pyserver.py, run by python3.
func pyServer(t *testing.T) (command string, script string) {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed")
	}
	script, err = filepath.Abs("testdata/pyserver.py")
	if err != nil {
		t.Fatal(err)
	}
	return py, script
}

const testAPIKey = "sk-or-v1-modelkey0123456789"

// stdioEnv is tiny-go's environment in these tests: the model's key, a
// variable the server may get (MCP_TEST_DIR) and one it may not.
func stdioEnv(dir string) map[string]string {
	return map[string]string{
		"PATH":               os.Getenv("PATH"),
		"HOME":               os.Getenv("HOME"),
		"OPENROUTER_API_KEY": testAPIKey,
		"MCP_TEST_DIR":       dir,
		"UNLISTED":           "not-for-the-server",
	}
}

type stdioEntry struct {
	Command       string   `json:"command"`
	Args          []string `json:"args,omitzero"`
	PassEnv       []string `json:"passEnv,omitzero"`
	AllowedTools  []string `json:"allowedTools,omitzero"`
	CallTimeoutMs int64    `json:"callTimeoutMs,omitzero"`
}

func stdioCatalogServer(t *testing.T, alias string, e stdioEntry) Server {
	t.Helper()
	data, err := jsonv2.Marshal(map[string]any{"servers": map[string]stdioEntry{alias: e}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := ParseCatalog(data, testEnv(nil))
	if err != nil {
		t.Fatalf("catalog: %v", err)
	}
	return c.Servers[0]
}

// stdioOptions runs servers in a fresh working directory and collects the
// notices.
type stdioRun struct {
	dir     string
	opts    Options
	mu      sync.Mutex
	notices []string
}

func newStdioRun(t *testing.T) *stdioRun {
	r := &stdioRun{dir: t.TempDir()}
	tr, err := procs.Open(r.dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	env := stdioEnv(r.dir)
	r.opts = Options{
		WorkDir:        r.dir,
		LookupEnv:      testEnv(env),
		Secrets:        []string{testAPIKey},
		ConnectTimeout: 10 * time.Second,
		Procs:          tr,
		Notice: func(line string) {
			r.mu.Lock()
			r.notices = append(r.notices, line)
			r.mu.Unlock()
		},
	}
	return r
}

func (r *stdioRun) noticesSeen() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.notices...)
}

func (r *stdioRun) pid(t *testing.T, name string) int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		data, err := os.ReadFile(filepath.Join(r.dir, name))
		if err == nil && len(data) > 0 {
			pid, err := strconv.Atoi(string(data))
			if err != nil {
				t.Fatal(err)
			}
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s", name)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (r *stdioRun) log(t *testing.T, alias string) string {
	t.Helper()
	path := filepath.Join(r.dir, ".tiny-agent", "mcp", alias+".log")
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("log mode %v, want 0600", fi.Mode().Perm())
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// processGone reports whether pid has ended (a zombie counts as ended:
// the init of a container may never reap an orphan).
func processGone(pid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	i := strings.LastIndexByte(string(data), ')')
	return i >= 0 && len(data) > i+2 && (data[i+2] == 'Z' || data[i+2] == 'X')
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

func TestStdioSDKServer(t *testing.T) {
	r := newStdioRun(t)
	s := stdioCatalogServer(t, "fx", stdioEntry{Command: sdkStdioServer(t), PassEnv: []string{"MCP_TEST_DIR"}, AllowedTools: []string{"echo", "env", "spawn"}})
	c, err := Connect(context.Background(), s, r.opts)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.Transport() != TransportStdio {
		t.Errorf("transport %s", c.Transport())
	}
	if got, want := c.StartupLine(), "MCP fx: connected ("+c.Protocol()+", 3 tools)"; got != want || c.Protocol() == "" {
		t.Errorf("startup line %q", got)
	}
	tools := c.Tools()
	if res := tools[0].Run(context.Background(), []byte(`{"text":"hi"}`)); res.IsError || res.Content != "echo: hi" {
		t.Errorf("echo: %+v", res)
	}
	// The minimal environment: PATH, HOME and the passEnv variable, never
	// the model's key or an unlisted variable.
	res := tools[1].Run(context.Background(), []byte(`{}`))
	env := strings.Split(res.Content, "\n")
	for _, want := range []string{"PATH=" + os.Getenv("PATH"), "MCP_TEST_DIR=" + r.dir} {
		if !contains(env, want) {
			t.Errorf("environment %q lacks %s", env, want)
		}
	}
	if strings.Contains(res.Content, testAPIKey) || strings.Contains(res.Content, "UNLISTED") || strings.Contains(res.Content, "OPENROUTER") {
		t.Errorf("environment holds what it must not: %q", env)
	}
	if id := tools[0].Definition().DefinitionIdentity; !strings.Contains(id, `"endpoint":"stdio:`+s.Command) {
		t.Errorf("identity %s", id)
	}

	server := r.pid(t, "server.pid")
	child, err := strconv.Atoi(tools[2].Run(context.Background(), []byte(`{}`)).Content)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	waitGone(t, "the server", server)
	waitGone(t, "the server's child", child)
	log := r.log(t, "fx")
	if !strings.Contains(log, "stdioserver: starting") || strings.Contains(log, testAPIKey) {
		t.Errorf("log %q", log)
	}
	if n := len(r.noticesSeen()); n != 0 {
		t.Errorf("a closed server was reported: %q", r.noticesSeen())
	}
	if tr := r.opts.Procs; tr != nil {
		if n := tr.Close(); n != 0 {
			t.Errorf("the process record still held %d live processes", n)
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestStdioPythonServer(t *testing.T) {
	py, script := pyServer(t)
	r := newStdioRun(t)
	s := stdioCatalogServer(t, "py", stdioEntry{Command: py, Args: []string{script}, PassEnv: []string{"MCP_TEST_DIR"}, AllowedTools: []string{"echo", "fail"}})
	c, err := Connect(context.Background(), s, r.opts)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// It answered server/discover with "method not found": the older
	// handshake followed.
	if got := c.StartupLine(); got != "MCP py: connected (2025-06-18, 2 tools)" {
		t.Errorf("startup line %q", got)
	}
	if res := c.Tools()[0].Run(context.Background(), []byte(`{"text":"hi"}`)); res.IsError || res.Content != "py: hi" {
		t.Errorf("echo: %+v", res)
	}
	// A call that fails on the server leaves the server usable.
	res := c.Tools()[1].Run(context.Background(), []byte(`{}`))
	if want := "MCP py: calling fail: the server answered tools/call with error -32603: deliberate failure"; !res.IsError || res.Content != want {
		t.Errorf("fail: %q, want %q", res.Content, want)
	}
	if res := c.Tools()[0].Run(context.Background(), []byte(`{"text":"again"}`)); res.IsError || res.Content != "py: again" {
		t.Errorf("echo after a failed call: %+v", res)
	}
	server := r.pid(t, "server.pid")
	c.Close()
	waitGone(t, "the server", server)
	if log := r.log(t, "py"); !strings.Contains(log, "pyserver: starting in mode normal") {
		t.Errorf("log %q", log)
	}
}

// A crash in the middle of a call fails that call with the exit, reports
// the server once, and every later call says the server is gone.
func TestStdioCrashMidCall(t *testing.T) {
	py, script := pyServer(t)
	for _, tt := range []struct {
		name string
		e    stdioEntry
	}{
		{"sdk", stdioEntry{Command: sdkStdioServer(t), PassEnv: []string{"MCP_TEST_DIR"}, AllowedTools: []string{"crash", "echo"}}},
		{"python", stdioEntry{Command: py, Args: []string{script}, PassEnv: []string{"MCP_TEST_DIR"}, AllowedTools: []string{"crash", "echo"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := newStdioRun(t)
			c, err := Connect(context.Background(), stdioCatalogServer(t, "fx", tt.e), r.opts)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			server := r.pid(t, "server.pid")
			res := c.Tools()[0].Run(context.Background(), []byte(`{}`))
			want := "MCP fx: calling crash: the server exited (exit status 3) before answering tools/call; its stderr is in .tiny-agent/mcp/fx.log"
			if !res.IsError || res.Content != want {
				t.Errorf("crash: %q, want %q", res.Content, want)
			}
			waitGone(t, "the server", server)
			// Once the client has noticed the exit (its one notice), every
			// later call says the server is gone. (A call sent in between
			// says it exited before answering.)
			deadline := time.Now().Add(5 * time.Second)
			for len(r.noticesSeen()) == 0 && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			res = c.Tools()[1].Run(context.Background(), []byte(`{"text":"x"}`))
			want = "MCP fx: calling echo: the server is gone: exited (exit status 3); its stderr is in .tiny-agent/mcp/fx.log"
			if !res.IsError || res.Content != want {
				t.Errorf("after the crash: %q, want %q", res.Content, want)
			}
			c.Close()
			notices := r.noticesSeen()
			if len(notices) != 1 || notices[0] != "MCP fx: the server exited (exit status 3); its stderr is in .tiny-agent/mcp/fx.log; its tools fail from now on" {
				t.Errorf("notices %q, want exactly one", notices)
			}
			if log := r.log(t, "fx"); !strings.Contains(log, "crashing") {
				t.Errorf("log %q", log)
			}
		})
	}
}

// Servers that never finish the handshake, or that write something other
// than JSON-RPC, fail with their cause and leave no process behind.
func TestStdioBrokenServers(t *testing.T) {
	py, script := pyServer(t)
	for _, tt := range []struct {
		mode string
		kind string
		want string
	}{
		{"silent", ErrorTimeout, "MCP fx: connecting: no reply to server/discover within 2s"},
		{"silent-initialize", ErrorTimeout, "MCP fx: connecting: no reply to initialize within 2s"},
		{"garbage", ErrorConnectionFailed, "MCP fx: connecting: not an MCP server: it wrote something other than JSON-RPC to its stdout; its stderr is in .tiny-agent/mcp/fx.log"},
	} {
		t.Run(tt.mode, func(t *testing.T) {
			r := newStdioRun(t)
			r.opts.ConnectTimeout = 2 * time.Second
			if tt.kind == ErrorConnectionFailed {
				r.opts.ConnectTimeout = 10 * time.Second
			}
			s := stdioCatalogServer(t, "fx", stdioEntry{Command: py, Args: []string{script, tt.mode}, PassEnv: []string{"MCP_TEST_DIR"}, AllowedTools: []string{"echo"}})
			start := time.Now()
			c, err := Connect(context.Background(), s, r.opts)
			if err == nil {
				c.Close()
				t.Fatal("connected")
			}
			assertConnectError(t, err, tt.kind, tt.want)
			if d := time.Since(start); d > 8*time.Second {
				t.Errorf("took %v", d)
			}
			waitGone(t, "the server", r.pid(t, "server.pid"))
		})
	}
}

func TestStdioStartFailures(t *testing.T) {
	r := newStdioRun(t)
	for _, tt := range []struct {
		e    stdioEntry
		want string
	}{
		{stdioEntry{Command: "no-such-mcp-server-xyz", AllowedTools: []string{"x"}}, "MCP fx: starting no-such-mcp-server-xyz: not found on PATH"},
		{stdioEntry{Command: "/nonexistent/server", AllowedTools: []string{"x"}}, "MCP fx: starting /nonexistent/server: no such file"},
		{stdioEntry{Command: "sh", PassEnv: []string{"OPENROUTER_API_KEY"}, AllowedTools: []string{"x"}}, "MCP fx: starting sh: OPENROUTER_API_KEY holds the model's API key or another secret; it is never passed to an MCP server"},
	} {
		_, err := Connect(context.Background(), stdioCatalogServer(t, "fx", tt.e), r.opts)
		assertConnectError(t, err, ErrorConnectionFailed, tt.want)
		if strings.Contains(err.Error(), testAPIKey) {
			t.Errorf("the key is in %q", err)
		}
	}
}

func TestStdioLogRefusesSymlink(t *testing.T) {
	r := newStdioRun(t)
	dir := filepath.Join(r.dir, ".tiny-agent", "mcp")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(t.TempDir(), "elsewhere")
	if err := os.Symlink(target, filepath.Join(dir, "fx.log")); err != nil {
		t.Fatal(err)
	}
	_, err := Connect(context.Background(), stdioCatalogServer(t, "fx", stdioEntry{Command: "sh", AllowedTools: []string{"x"}}), r.opts)
	if err == nil || !strings.HasPrefix(err.Error(), "MCP fx: starting sh: opening its log: ") {
		t.Fatalf("err = %v", err)
	}
	if _, err := os.Lstat(target); err == nil {
		t.Error("the log followed the symlink")
	}
}

// A tiny-go killed with SIGKILL leaves a server's children running (the
// leader dies with it through Pdeathsig); the server's process group is in
// the run's process record, so the next start's procs.ReapStale ends them,
// but never the servers of a tiny-go that still runs.
func TestStdioOrphansReapedAfterSIGKILL(t *testing.T) {
	if os.Getenv("MCP_TEST_HELPER_DIR") != "" {
		helperConnectAndWait()
		return
	}
	server := sdkStdioServer(t)
	dir := t.TempDir()
	helper := exec.Command(os.Args[0], "-test.run=^TestStdioOrphansReapedAfterSIGKILL$")
	helper.Env = append(os.Environ(), "MCP_TEST_HELPER_DIR="+dir, "MCP_TEST_SERVER="+server, "MCP_TEST_DIR="+dir)
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	r := &stdioRun{dir: dir}
	serverPid := r.pid(t, "server.pid")
	child := r.pid(t, "child.pid")
	// The helper still runs: its server is not an orphan.
	if n, err := procs.ReapStale(dir); n != 0 || err != nil {
		t.Fatalf("reaped %d (%v) while the owner runs", n, err)
	}
	if processGone(child) {
		t.Fatal("the child of a live server was killed")
	}
	helper.Process.Kill()
	helper.Wait()
	waitGone(t, "the server leader", serverPid)
	if processGone(child) {
		t.Fatal("the child died with tiny-go: the test proves nothing")
	}
	if n, err := procs.ReapStale(dir); n < 1 || err != nil {
		t.Fatalf("reaped %d (%v), want the orphaned child", n, err)
	}
	waitGone(t, "the orphaned child", child)
	if records, _ := filepath.Glob(filepath.Join(dir, ".tiny-agent", "procs", "*.json")); len(records) != 0 {
		t.Errorf("process records left: %q", records)
	}
}

// helperConnectAndWait is the tiny-go of TestStdioOrphansReapedAfterSIGKILL.
func helperConnectAndWait() {
	dir := os.Getenv("MCP_TEST_HELPER_DIR")
	data := `{"servers":{"fx":{"command":` + strconv.Quote(os.Getenv("MCP_TEST_SERVER")) + `,"passEnv":["MCP_TEST_DIR"],"allowedTools":["spawn"]}}}`
	cat, err := ParseCatalog([]byte(data), os.LookupEnv)
	if err != nil {
		panic(err)
	}
	tr, err := procs.Open(dir)
	if err != nil {
		panic(err)
	}
	c, err := Connect(context.Background(), cat.Servers[0], Options{WorkDir: dir, Procs: tr})
	if err != nil {
		panic(err)
	}
	c.Tools()[0].Run(context.Background(), []byte(`{}`))
	var forever atomic.Bool
	for !forever.Load() {
		time.Sleep(time.Hour)
	}
}

// The sandbox of bash confines a stdio server: it may write in the working
// directory, not elsewhere.
func TestStdioServerIsConfined(t *testing.T) {
	if sandbox.ABI() == 0 {
		t.Skip("this kernel has no Landlock")
	}
	py, script := pyServer(t)
	r := newStdioRun(t)
	home, err := os.UserHomeDir()
	if err != nil {
		t.Skip(err)
	}
	outside, err := os.MkdirTemp(home, "mcp-sandbox-test-")
	if err != nil {
		t.Skip(err)
	}
	defer os.RemoveAll(outside)
	sb, _, err := sandbox.New(sandbox.Policy{Mode: sandbox.Workspace, WorkDir: r.dir, Getenv: func(k string) string { v, _ := r.opts.LookupEnv(k); return v }})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	r.opts.Sandbox = sb
	c, err := Connect(context.Background(), stdioCatalogServer(t, "py", stdioEntry{Command: py, Args: []string{script}, PassEnv: []string{"MCP_TEST_DIR"}, AllowedTools: []string{"touch"}}), r.opts)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	touch := c.Tools()[0]
	if res := touch.Run(context.Background(), []byte(`{"path":`+strconv.Quote(filepath.Join(r.dir, "inside"))+`}`)); res.Content != "created" {
		t.Errorf("inside the working directory: %+v", res)
	}
	if res := touch.Run(context.Background(), []byte(`{"path":`+strconv.Quote(filepath.Join(outside, "f"))+`}`)); res.Content != "refused: Permission denied" {
		t.Errorf("outside the writable roots: %+v", res)
	}
}
