package cli

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tiny-agent/tiny-go/internal/cli/cmdutil"
	"github.com/tiny-agent/tiny-go/internal/providertest"
)

// Errors that tell the fix (issue 20).

func TestUnknownFlagSuggestsTheNearestFlag(t *testing.T) {
	c := newCLI(t, nil)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--idle-timout", "3s", "hi"}, "unknown flag: --idle-timout (did you mean --idle-timeout?)"},
		{[]string{"session", "list", "--jsn"}, "unknown flag: --jsn (did you mean --json?)"},
	} {
		code, _, stderr := c.main("", tc.args...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want %q", tc.args, code, stderr, tc.want)
		}
	}
	// Nothing near: no guess.
	if _, _, stderr := c.main("", "--zzzzzzzzzz"); strings.Contains(stderr, "did you mean") {
		t.Errorf("a guess for a flag nothing is near: %q", stderr)
	}
}

func TestSessionShowOfAnUnknownIDSaysNoSuchSession(t *testing.T) {
	c := newCLI(t, nil)
	code, _, stderr := c.main("", "session", "show", "nope")
	if code != exitUsage || !strings.Contains(stderr, "no session nope in this directory") || strings.Contains(stderr, "cannot read") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, args := range [][]string{
		{"show", "0190c3d2-7f3e-7a1b-8c4d-5e6f7a8b9c0d"},
		{"abort", "nope"}, {"abort", "0190c3d2-7f3e-7a1b-8c4d-5e6f7a8b9c0d"},
		{"fork", "nope"}, {"rewind", "nope", "--turn", "1"}, {"state", "nope"}, {"verify", "nope"},
	} {
		code, _, stderr = c.main("", append([]string{"session"}, args...)...)
		if code != exitUsage || !strings.Contains(stderr, "no session "+args[1]+" in this directory") {
			t.Errorf("session %v: exit %d: %s", args, code, stderr)
		}
	}
}

// A first request that nothing answers fails at once, says where it went,
// which setting chose it and what to check, and leaves no session behind
// (there is no turn to resume, only a setting to fix).
func TestRefusedEndpointFailsFastAndLeavesNoSession(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	c := newCLI(t, nil)
	c.env["TINY_ENDPOINT"] = "http://" + addr + "/v1"
	began := time.Now()
	code, _, stderr := c.main("", "hello")
	if code != cmdutil.ExitFailed || !strings.Contains(stderr, "nothing answered at http://"+addr+"/v1/chat/completions (from TINY_ENDPOINT): is the server running?") {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	if time.Since(began) > 10*time.Second {
		t.Errorf("took %v; want one quick retry", time.Since(began))
	}
	if strings.Contains(stderr, "Resume:") || len(c.sessions()) != 0 {
		t.Errorf("a session to resume was left: %v\n%s", c.sessions(), stderr)
	}
}

// The endpoint of a settings file is named by its file and line.
func TestRefusedEndpointNamesTheSettingsFile(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	c := newCLI(t, nil)
	delete(c.env, "TINY_ENDPOINT")
	file := filepath.Join(c.dir, ".tiny-agent", "config.toml")
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte("# the local server\nendpoint = \"http://"+addr+"/v1\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := c.main("", "hello")
	if code != cmdutil.ExitFailed || !strings.Contains(stderr, "(from endpoint in "+file+":2): is the server running?") {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
}

func TestConfigFailuresLeaveNoSessionButLaterOnesKeepIt(t *testing.T) {
	for _, status := range []int{401, 403, 404} {
		srv := providertest.New(t, providertest.Reply{Status: status})
		c := newCLI(t, srv)
		code, _, stderr := c.main("", "hello")
		if code != cmdutil.ExitFailed || strings.Contains(stderr, "Resume:") || len(c.sessions()) != 0 {
			t.Errorf("HTTP %d: exit %d, sessions %v:\n%s", status, code, c.sessions(), stderr)
		}
		if entries, _ := os.ReadDir(filepath.Join(c.dir, ".tiny-agent", "sessions")); len(entries) != 0 {
			t.Errorf("HTTP %d: left %d entries in the sessions directory", status, len(entries))
		}
	}
	// A session with a turn keeps its file and its Resume line.
	srv := providertest.New(t, providertest.Reply{Text: "hi"}, providertest.Reply{Status: 401})
	c := newCLI(t, srv)
	if code, _, stderr := c.main("", "hello"); code != 0 {
		t.Fatal(stderr)
	}
	code, _, stderr := c.main("", "--continue", "again")
	if code != cmdutil.ExitFailed || !strings.Contains(stderr, "Resume:") || len(c.sessions()) != 1 {
		t.Errorf("exit %d, sessions %v:\n%s", code, c.sessions(), stderr)
	}
}

// Without a terminal an approval question cannot be answered: both the
// run that asks and the resume hint it leaves say what works instead.
func TestApprovalWithoutATerminalSaysWhatWorks(t *testing.T) {
	srv := providertest.New(t,
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c1", "bash", `{"command":"echo hi"}`)}},
		providertest.Reply{Text: "done"},
	)
	c := newCLI(t, srv)
	code, _, stderr := c.main("", "--approval", "ask", "say hi")
	id := sessionID(t, c)
	want := "a call is waiting for approval and there is no terminal to answer it; run tiny-go --session " + id +
		" in a terminal to answer, or tiny-go --session " + id + " --approval auto to allow every call"
	if code != cmdutil.ExitFailed || !strings.Contains(stderr, want) {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	code, _, stderr = c.main("", "--session", id)
	if code != cmdutil.ExitFailed || !strings.Contains(stderr, want) {
		t.Fatalf("resume: exit %d:\n%s", code, stderr)
	}
	code, _, stderr = c.main("", "--session", id, "--approval", "auto")
	if code != 0 || !strings.Contains(stderr, "Recovered the open run") {
		t.Fatalf("the command it printed: exit %d:\n%s", code, stderr)
	}
}

func TestInteractiveConfigFailureLeavesNoSession(t *testing.T) {
	srv := providertest.New(t, providertest.Reply{Status: 401})
	c := newCLI(t, srv)
	code, stdout, stderr := c.main("hello\n/exit\n")
	if strings.Contains(stdout+stderr, "Resume:") || len(c.sessions()) != 0 {
		t.Errorf("exit %d, sessions %v:\n%s\n%s", code, c.sessions(), stdout, stderr)
	}
	if !strings.Contains(stdout+stderr, "HTTP 401") {
		t.Errorf("the failure was not shown:\n%s\n%s", stdout, stderr)
	}
}
