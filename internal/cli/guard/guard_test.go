package guard

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/approval"
	"github.com/tiny-agent/tiny-go/internal/cli/cmdutil"
	"github.com/tiny-agent/tiny-go/internal/tools"
	"github.com/tiny-agent/tiny-go/internal/ui"
)

// project is a working tree whose .claude/settings.json holds settings,
// with HOME elsewhere.
func project(t *testing.T, settings string) Options {
	t.Helper()
	cwd, home := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(cwd, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	if settings != "" {
		if err := os.WriteFile(filepath.Join(cwd, ".claude", "settings.json"), []byte(settings), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := map[string]string{"HOME": home}
	return Options{Cwd: cwd, Getenv: func(k string) string { return env[k] }, Stderr: io.Discard,
		Sandbox: SandboxFlags{Mode: "off", Network: "on"}}
}

func TestApprovalMode(t *testing.T) {
	for _, c := range []struct {
		name, settings, flag string
		ui, json             bool
		want                 approval.Mode
	}{
		{"interactive asks", "", "", true, false, approval.Ask},
		{"one-shot runs", "", "", false, false, approval.Auto},
		{"--json runs", "", "", true, true, approval.Auto},
		{"defaultMode plan", `{"permissions":{"defaultMode":"plan"}}`, "", true, false, approval.Plan},
		{"defaultMode bypassPermissions", `{"permissions":{"defaultMode":"bypassPermissions"}}`, "", true, false, approval.Auto},
		{"--approval wins over defaultMode", `{"permissions":{"defaultMode":"plan"}}`, "review", false, false, approval.Review},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := project(t, c.settings)
			o.Approval, o.UI, o.JSON = c.flag, c.ui, c.json
			g, err := New(o)
			if err != nil {
				t.Fatal(err)
			}
			if got := g.Approval(); got != c.want {
				t.Fatalf("approval %q, want %q", got, c.want)
			}
		})
	}
	o := project(t, "")
	o.Approval = "sometimes"
	var usage cmdutil.UsageError
	if _, err := New(o); !errors.As(err, &usage) {
		t.Fatalf("--approval sometimes: %v, want a usage error", err)
	}
}

func TestOpenSandboxRefusesBadFlags(t *testing.T) {
	for _, c := range []struct {
		flags SandboxFlags
		want  string
	}{
		{SandboxFlags{Mode: "workspace", Network: "maybe"}, "--network must be on, off or rules"},
		{SandboxFlags{Mode: "read-only", Network: "on", Writable: []string{"/srv"}}, "--writable needs --sandbox workspace"},
		{SandboxFlags{Mode: "everywhere", Network: "on"}, "everywhere"},
	} {
		flags, want := c.flags, c.want
		o := project(t, "")
		o.Sandbox = flags
		g, err := New(o)
		if err != nil {
			t.Fatal(err)
		}
		err = g.OpenSandbox()
		var usage cmdutil.UsageError
		if !errors.As(err, &usage) || !strings.Contains(err.Error(), want) {
			t.Errorf("%+v: %v, want a usage error saying %q", flags, err, want)
		}
		g.Close()
	}
}

func TestNoGateInAutoModeWithoutTheUI(t *testing.T) {
	g, err := New(project(t, ""))
	if err != nil {
		t.Fatal(err)
	}
	gate, err := g.NewGate(GateOptions{SessionPath: filepath.Join(t.TempDir(), "s.jsonl")})
	if gate != nil || err != nil {
		t.Fatalf("gate %v, %v; want none in auto mode", gate, err)
	}
}

// terminal is a Terminal whose UI is not attached and whose stdin is in.
func terminal(in string, asked *int) Terminal {
	return Terminal{
		UI: func(context.Context, approval.Prompt) (approval.Answer, error) {
			*asked++
			return approval.Answer{}, ui.ErrNotAttached
		},
		Hold:      func() func() { return func() {} },
		Stdin:     strings.NewReader(in),
		Stderr:    &bytes.Buffer{},
		SessionID: func() string { return "0190-abc" },
		Abort:     func(context.Context) error { return nil },
	}
}

func TestDontAskRefusesWithoutAsking(t *testing.T) {
	o := project(t, `{"permissions":{"defaultMode":"dontAsk"}}`)
	o.UI = true
	g, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	asked := 0
	ans, err := g.TerminalAsk(terminal("y\n", &asked))(context.Background(), approval.Prompt{Tool: "bash", Action: "Run a command"})
	if err != nil || ans.Choice != approval.Deny || !strings.Contains(ans.Reason, "dontAsk") || asked != 0 {
		t.Fatalf("answer %+v, %v, asked %d times; want a refusal without asking", ans, err, asked)
	}
	// Where no one can be asked (one-shot), dontAsk does not apply.
	o.UI = false
	g, _ = New(o)
	if _, err := g.TerminalAsk(terminal("y\n", &asked))(context.Background(), approval.Prompt{Tool: "bash", Action: "Run a command"}); err != nil || asked != 1 {
		t.Fatalf("one-shot: %v, asked %d times; want the question asked", err, asked)
	}
}

func TestNoAnswerSaysHowToGoOn(t *testing.T) {
	g, err := New(project(t, ""))
	if err != nil {
		t.Fatal(err)
	}
	asked, held := 0, 0
	term := terminal("", &asked)
	term.Hold = func() func() { held++; return func() { held-- } }
	_, err = g.TerminalAsk(term)(context.Background(), approval.Prompt{Tool: "bash", Action: "Run a command"})
	if !errors.Is(err, io.EOF) || !strings.Contains(err.Error(), "tiny-go --session 0190-abc --approval auto") {
		t.Fatalf("%v; want io.EOF naming the session", err)
	}
	if held != 0 {
		t.Fatalf("the progress display is still held (%d)", held)
	}
}

func TestCloseRemovesScratchDirectories(t *testing.T) {
	o := project(t, "")
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache) // the temporary directory holds the tree
	o.Approval, o.Sandbox.Mode = "review", "workspace"
	g, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.OpenSandbox(); err != nil {
		t.Fatal(err)
	}
	sealed, err := g.Sealed()
	if err != nil {
		t.Fatal(err)
	}
	if g.Sandbox().Confined() != (sealed != nil) {
		t.Fatalf("sealed %v with a confined sandbox %v", sealed, g.Sandbox().Confined())
	}
	g.PlanTools(nil, tools.Config{WorkDir: o.Cwd}, func() bool { return true })
	_, _ = g.ReadOnly()() // makes plan mode's scratch directory (Landlock or not)
	made, _ := filepath.Glob(filepath.Join(cache, "tiny-go-*"))
	if len(made) == 0 {
		t.Fatal("no scratch directory made in the cache directory")
	}
	for _, d := range made {
		if within(d, o.Cwd) {
			t.Fatalf("scratch %s is in the working tree", d)
		}
	}
	g.Close()
	if left, _ := filepath.Glob(filepath.Join(cache, "tiny-go-*")); len(left) != 0 {
		t.Fatalf("left after Close: %v", left)
	}
}

func TestProcessRecordIsStartedOnce(t *testing.T) {
	g, err := New(project(t, ""))
	if err != nil {
		t.Fatal(err)
	}
	if g.Procs() != nil {
		t.Fatal("a process record before TrackProcesses")
	}
	if err := g.TrackProcesses(); err != nil {
		t.Fatal(err)
	}
	first := g.Procs()
	if err := g.TrackProcesses(); err != nil || first == nil || g.Procs() != first {
		t.Fatalf("second TrackProcesses: %v; record %p then %p, want the first kept", err, first, g.Procs())
	}
	first.Close()
}
