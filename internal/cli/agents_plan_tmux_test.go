package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/planmode"
	"github.com/tiny-agent/tiny-go/internal/providertest"
	"github.com/tiny-agent/tiny-go/internal/session"
)

// toolResults are the results of a session's calls, by tool call id.
func toolResults(st *session.State) map[string]string {
	out := map[string]string{}
	for _, m := range st.Transcript {
		if m.Role == session.RoleTool && m.Content != nil {
			out[m.ToolCallID] = *m.Content
		}
	}
	return out
}

// TestPlanModeTmux: Shift+Tab cycles ask -> auto -> plan; in plan mode
// `ls` works, `touch` fails and changes nothing (the kernel's Landlock
// makes the tree read-only), write is refused; the plan is accepted with
// 1, which switches to auto mode and carries it out.
func TestPlanModeTmux(t *testing.T) {
	needTmux(t)
	srv := providertest.New(t,
		providertest.Reply{ToolCalls: []providertest.ToolCall{
			toolCall("ls", "bash", `{"command":"ls"}`),
			toolCall("touch", "bash", `{"command":"touch made-in-plan-mode"}`),
			toolCall("write", "write", `{"path":"written-in-plan-mode","content":"x"}`),
		}},
		providertest.Reply{Text: "1. Create notes.txt"},
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("w2", "write", `{"path":"notes.txt","content":"planned\n"}`)}},
		providertest.Reply{Text: "carried out"},
	)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "present.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := programAs(t, "tiny-go")
	p := &tmuxPane{t: t, socket: fmt.Sprintf("tinygo-plan-%d", os.Getpid())}
	script := fmt.Sprintf(`cd %s && TERM=tmux-256color OPENROUTER_API_KEY=k OTEL_SDK_DISABLED=true TINY_ENDPOINT=%s %s; echo EXIT=$?; sleep 60`, dir, srv.URL(), bin)
	p.tmux("new-session", "-d", "-x", "120", "-y", "45", "-s", "s", "sh", "-c", script)
	t.Cleanup(func() { killTmux(p.socket) })
	p.waitText("/compact  /skill:name  /exit")
	p.keys("BTab")
	p.waitText("auto mode")
	p.keys("BTab")
	p.waitText("plan mode: read-only")

	p.text("how would you add notes?")
	p.keys("Enter")
	p.waitText("Accept this plan?")
	for _, f := range []string{"made-in-plan-mode", "written-in-plan-mode"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			t.Fatalf("plan mode made %s", f)
		}
	}
	res := toolResults(reduceOnly(t, dir))
	if !strings.Contains(res["ls"], "present.txt") {
		t.Errorf("ls in plan mode: %q", res["ls"])
	}
	if !strings.Contains(res["touch"], "Command exited with code 1") {
		t.Errorf("touch in plan mode: %q", res["touch"])
	}
	if res["write"] != planmode.Refusal("write").Content {
		t.Errorf("write in plan mode: %q", res["write"])
	}
	first := srv.Requests()[0].Chat.Messages
	if c := *first[len(first)-1].Content; !strings.HasSuffix(c, planmode.Reminder) {
		t.Errorf("the planning prompt lacks the reminder: %q", c)
	}

	p.keys("1")
	p.waitText("carried out")
	p.waitText("auto mode")
	if b, err := os.ReadFile(filepath.Join(dir, "notes.txt")); err != nil || string(b) != "planned\n" {
		t.Fatalf("the accepted plan did not run: %q %v", b, err)
	}
	reqs := srv.Requests()
	acc := reqs[2].Chat.Messages
	if c := *acc[len(acc)-1].Content; c != planmode.Accepted {
		t.Errorf("the acceptance prompt is %q", c)
	}
	p.keys("C-c", "C-c")
	p.waitText("EXIT=0")
}

// TestPlanModeOneShot: --approval plan in a one-shot run.
func TestPlanModeOneShot(t *testing.T) {
	srv := providertest.New(t,
		providertest.Reply{ToolCalls: []providertest.ToolCall{
			toolCall("touch", "bash", `{"command":"touch a.txt made && echo wrote"}`),
			toolCall("edit", "edit", `{"path":"a.txt","edits":[{"oldText":"alpha","newText":"beta"}]}`),
		}},
		providertest.Reply{Text: "the plan"},
	)
	code, stdout, stderr, dir := runProgram(t, srv, "--approval", "plan", "plan it")
	if code != 0 || strings.TrimSpace(stdout) != "the plan" {
		t.Fatalf("exit %d, stdout %q, stderr:\n%s", code, stdout, stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != "alpha\n" {
		t.Fatalf("a.txt changed: %q", b)
	}
	if _, err := os.Stat(filepath.Join(dir, "made")); err == nil {
		t.Fatal("touch made a file in plan mode")
	}
	msgs := srv.Requests()[1].Chat.Messages
	var results []string
	for _, m := range msgs {
		if m.Role == "tool" {
			results = append(results, *m.Content)
		}
	}
	if len(results) != 2 || strings.Contains(results[0], "wrote") || results[1] != planmode.Refusal("edit").Content {
		t.Fatalf("results: %q", results)
	}
}
