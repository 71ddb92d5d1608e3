package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/providertest"
)

// TestHooksInATerminal runs Claude Code hooks in an interactive session
// in tmux: the rm -rf guard blocks before any question is asked, a hook
// that exits 1 gets one line above the prompt, and waiting for an approval
// runs the Notification hook (permission_prompt) and sends the terminal
// an OSC 9 notification.
func TestHooksInATerminal(t *testing.T) {
	needTmux(t)
	srv := providertest.New(t,
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c1", "bash", `{"command":"rm -rf victim"}`)}},
		providertest.Reply{Text: "guard respected"},
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c2", "bash", `{"command":"echo hi > hi.txt"}`)}},
		providertest.Reply{Text: "wrote hi"},
	)
	h := newHookRun(t, `{"hooks":{
"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"$CLAUDE_PROJECT_DIR/.claude/hooks/guard.sh"}]}],
"UserPromptSubmit":[{"hooks":[{"type":"command","command":"echo 'prompt logger is down' >&2; exit 1"}]}],
"Notification":[{"matcher":"permission_prompt","hooks":[{"type":"command","command":"sh .claude/hooks/notify.sh"}]}]}}`)
	h.script("guard.sh", `case "$(cat)" in *'rm -rf'*) echo "no rm -rf here" >&2; exit 2;; esac`)
	h.script("notify.sh", saveInput("notify"))
	h.write("victim/keep.txt", "precious\n")
	dir := h.dir
	bin := programAs(t, "tiny-go")
	env := fmt.Sprintf("TERM=tmux-256color HOME=%s OPENROUTER_API_KEY=k OTEL_SDK_DISABLED=true TINY_NOTIFY=osc9 TINY_ENDPOINT=%s", h.home, srv.URL())
	p := &tmuxPane{t: t, socket: fmt.Sprintf("tinygo-hooks-%d", os.Getpid())}
	script := fmt.Sprintf(`cd %s && exec env %s %s`, dir, env, bin)
	p.tmux("new-session", "-d", "-x", "100", "-y", "30", "-s", "s", "sh", "-c", script+"; sleep 60")
	t.Cleanup(func() { killTmux(p.socket) })

	p.waitText("/compact  /skill:name  /exit")
	// The pane's raw output, escape sequences included.
	raw := filepath.Join(t.TempDir(), "raw")
	p.tmux("pipe-pane", "-t", "s", "-o", "cat >> "+raw)
	p.text("clean up")
	p.keys("Enter")
	p.waitText("guard respected")
	if _, err := os.Stat(filepath.Join(dir, "victim", "keep.txt")); err != nil {
		t.Fatal("the guarded rm -rf ran")
	}
	if strings.Contains(p.screen(), "Allow bash?") {
		t.Fatal("a blocked call was put to the user")
	}
	if n := strings.Count(strings.ReplaceAll(p.screen(), "\n", " "), "exited 1: prompt logger is down; not blocking"); n != 1 {
		t.Fatalf("want one line about the failing hook, got %d:\n%s", n, p.screen())
	}
	if got := toolMessage(srv.Requests()[1], "c1"); !strings.Contains(got, "no rm -rf here") {
		t.Fatalf("the model was sent %q", got)
	}

	p.text("say hi")
	p.keys("Enter")
	p.waitText("Allow bash? y allow once")
	in := h.inputs("notify")
	if len(in) != 1 || in[0]["notification_type"] != "permission_prompt" || !strings.Contains(fmt.Sprint(in[0]["message"]), "bash") {
		t.Fatalf("Notification inputs: %v", in)
	}
	osc := "\x1b]9;tiny-go needs your permission to use bash\x07"
	p.wait("the OSC 9 notification", func(string) bool {
		b, _ := os.ReadFile(raw)
		return strings.Contains(string(b), osc)
	})
	p.keys("y")
	p.waitText("wrote hi")
	if _, err := os.Stat(filepath.Join(dir, "hi.txt")); err != nil {
		t.Fatal("the approved call did not run")
	}
}
