package hooks

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/tiny-agent/tiny-go/internal/agent"
)

func TestMatchers(t *testing.T) {
	c := Load(nil, []Table{{Source: "t", JSON: []byte(`{"PreToolUse":[
{"matcher":"Edit|Write","hooks":[{"type":"command","command":"a"}]},
{"matcher":"mcp__.*","hooks":[{"type":"command","command":"b"}]},
{"matcher":"","hooks":[{"type":"command","command":"c"}]},
{"matcher":"bash","hooks":[{"type":"command","command":"d"}]},
{"matcher":"Bash","hooks":[{"type":"command","command":"d"}]},
{"matcher":"Bash","hooks":[{"type":"command","command":"d"}]}]}`)}})
	if len(c.Problems) != 0 {
		t.Fatal(c.Problems)
	}
	if len(c.Hooks) != 5 {
		t.Fatalf("%d hooks; the same matcher and command twice run once", len(c.Hooks))
	}
	cases := []struct {
		names []string
		want  string
	}{
		{[]string{"write", "Write"}, "a,c"},
		{[]string{"edit", "MultiEdit"}, "c"}, // exact names: Edit does not match MultiEdit
		{[]string{"mcp:srv/t", "mcp__srv__t"}, "b,c"},
		{[]string{"bash", "Bash"}, "c,d,d"},
		{[]string{"read", "Read"}, "c"},
	}
	for _, tc := range cases {
		var got []string
		for _, h := range c.On(PreToolUse) {
			if h.Matches(tc.names...) {
				got = append(got, h.Command)
			}
		}
		if strings.Join(got, ",") != tc.want {
			t.Errorf("%v matched %v, want %s", tc.names, got, tc.want)
		}
	}
}

func TestLoadProblems(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "settings.json")
	if err := os.WriteFile(bad, []byte(`{"hooks": {`), 0o644); err != nil {
		t.Fatal(err)
	}
	c := Load([]string{bad, filepath.Join(dir, "missing.json")}, []Table{{Source: "toml:3", JSON: []byte(`{"PreToolUse":[{"matcher":"(","hooks":[{"type":"command","command":"x"}]}],"OnSave":[],"Stop":[{"hooks":[{"type":"prompt"}]}]}`)}})
	if len(c.Hooks) != 0 || len(c.Problems) != 4 {
		t.Fatalf("hooks %v, problems %q", c.Hooks, c.Problems)
	}
	for i, want := range []string{bad + ": not valid JSON", `toml:3: hooks.PreToolUse: matcher "("`, `toml:3: hooks.Stop: a hook of type "prompt"`, `unknown event "OnSave"`} {
		if !strings.Contains(strings.Join(c.Problems, "\n"), want) {
			t.Errorf("problem %d %q missing: %q", i, want, c.Problems)
		}
	}
}

// A timed-out hook's whole process group is killed: what it started in
// the background too.
func TestTimeoutKillsTheProcessGroup(t *testing.T) {
	dir := t.TempDir()
	h := Hook{Command: "sleep 60 & echo $! > bg.pid; wait", Timeout: time.Second}
	r := runCommand(context.Background(), h, dir, os.Environ(), nil, nil)
	if !r.timedOut || r.err == nil {
		t.Fatalf("not timed out: %+v", r)
	}
	b, err := os.ReadFile(filepath.Join(dir, "bg.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	deadline := time.Now().Add(5 * time.Second)
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("the background child %d survived its hook's timeout", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A hook printing 10 MB is read to its end, kept to MaxOutput, and
// marked truncated; one that does not read its stdin still runs.
func TestOutputIsCapped(t *testing.T) {
	r := runCommand(context.Background(), Hook{Command: "head -c 10000000 /dev/zero", Timeout: time.Minute}, t.TempDir(), nil, make([]byte, 1<<20), nil)
	if r.err != nil || r.code != 0 || !r.truncated || len(r.stdout) != MaxOutput {
		t.Fatalf("code %d, err %v, truncated %v, %d bytes kept", r.code, r.err, r.truncated, len(r.stdout))
	}
}

func TestExitCodes(t *testing.T) {
	var lines []string
	r := New(Options{Report: func(l string) { lines = append(lines, l) }, Config: Load(nil, []Table{{Source: "s", JSON: []byte(`{"PreToolUse":[{"hooks":[
{"type":"command","command":"echo guard says no >&2; exit 2"},
{"type":"command","command":"echo '{\"hookSpecificOutput\":{\"permissionDecision\":\"allow\"}}'"},
{"type":"command","command":"exit 3"}]}]}`)}})})
	v := r.fire(context.Background(), PreToolUse, []string{"Bash"}, &Input{})
	if !v.block || v.reason[0] != "guard says no" || v.decision != "allow" || len(v.failed) != 1 {
		t.Fatalf("verdict %+v", v)
	}
	if len(lines) != 1 || !strings.Contains(lines[0], "exited 3: no message; not blocking") {
		t.Fatalf("lines %q", lines)
	}
}

func TestSequence(t *testing.T) {
	for _, tc := range []struct{ style, want string }{
		{NotifyBell, "\a"},
		{NotifyOSC9, "\x1b]9;done  ? no bell \x07"},
		{NotifyOSC777, "\x1b]777;notify;tiny,go;done  ? no bell \x07"},
		{NotifyOff, ""},
	} {
		if got := Sequence(tc.style, "tiny;go", "done \x1b? no bell\a"); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.style, got, tc.want)
		}
	}
}

func testRunner(t *testing.T, table string, failClosed bool) (*Runner, string) {
	t.Helper()
	dir := t.TempDir()
	session := filepath.Join(dir, ".tiny-agent", "sessions", "s.jsonl")
	if err := os.MkdirAll(filepath.Dir(session), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(session, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	r := New(Options{Config: Load(nil, []Table{{Source: "t", JSON: []byte(table)}}), Cwd: dir, ProjectDir: dir, Env: os.Environ(), FailClosed: failClosed})
	if err := r.Attach("id", session); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r, dir
}

// updatedInput in Claude Code's shape becomes tiny-go's arguments, and the
// decision is recorded: asked again, the runner answers from the record.
func TestBeforeToolUpdatedInput(t *testing.T) {
	r, dir := testRunner(t, `{"PreToolUse":[{"matcher":"Write","hooks":[{"type":"command","command":"echo x >> count; echo '{\"hookSpecificOutput\":{\"permissionDecision\":\"allow\",\"updatedInput\":{\"file_path\":\"/tmp/elsewhere.txt\",\"content\":\"safe\"}}}'"}]}]}`, false)
	call := agent.HookCall{Key: "a/c1", ToolCallID: "c1", Tool: "write", Arguments: []byte(`{"path":"x.txt","content":"risky"}`)}
	for range 2 {
		dec, err := r.BeforeTool(context.Background(), call)
		if err != nil {
			t.Fatal(err)
		}
		if dec.Decision != "allow" || string(dec.Arguments) != `{"content":"safe","path":"/tmp/elsewhere.txt"}` {
			t.Fatalf("decision %+v, arguments %s", dec, dec.Arguments)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "count")); string(b) != "x\n" {
		t.Fatalf("the hook ran %q", b)
	}
}

// With FailClosed a guard that crashes denies; without, it lets through.
func TestFailClosed(t *testing.T) {
	table := `{"PreToolUse":[{"hooks":[{"type":"command","command":"exit 1"}]}]}`
	call := agent.HookCall{Key: "a/c1", ToolCallID: "c1", Tool: "bash", Arguments: []byte(`{"command":"ls"}`)}
	for _, closed := range []bool{false, true} {
		r, _ := testRunner(t, table, closed)
		dec, err := r.BeforeTool(context.Background(), call)
		if err != nil {
			t.Fatal(err)
		}
		if (dec.Decision == "deny") != closed {
			t.Errorf("fail closed %v: decision %+v", closed, dec)
		}
	}
}

// A hook marshals to JSON (tiny-go config --json) with its timeout in
// seconds.
func TestHookJSON(t *testing.T) {
	b, err := json.Marshal(Hook{Event: Stop, Command: "x", Timeout: 90 * time.Second, Source: "f"})
	if err != nil || string(b) != `{"event":"Stop","command":"x","timeout":90,"source":"f"}` {
		t.Fatalf("%s, %v", b, err)
	}
}
