package cli

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/providertest"
	"github.com/tiny-agent/tiny-go/internal/session"
	"github.com/tiny-agent/tiny-go/internal/ui"
)

// The lines every mode shows for a reply cut off while calling tools and
// for a reply the model declined (the UI and one-shot print them; ACP ends
// the prompt with max_tokens and refusal).
var (
	cutOffLine   = ui.TruncatedLine
	declinedLine = "Failed: " + agent.DeclinedPrefix + " (refusal)"
)

// oneShot runs the real binary once with provider env and a prompt.
func oneShot(t *testing.T, srv *providertest.Server, env []string, prompt string) (code int, stdout, stderr string, dir string) {
	t.Helper()
	dir = t.TempDir()
	cmd := exec.Command(programAs(t, "tiny-go"), "--cwd", dir, prompt)
	cmd.Env = append(os.Environ(), childEnv+"=1", "OTEL_SDK_DISABLED=true", "TINY_ENDPOINT="+srv.URL(), "XDG_CONFIG_HOME="+t.TempDir())
	cmd.Env = append(cmd.Env, env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), out.String(), errb.String(), dir
}

// providerPaths are the API paths each provider posts to.
var providerPaths = map[string]string{"chat": "/chat/completions", "anthropic": "/messages", "responses": "/responses"}

var providerEnvs = map[string][]string{
	"chat":      {"OPENROUTER_API_KEY=test-key"},
	"anthropic": {"TINY_PROVIDER=anthropic", "ANTHROPIC_API_KEY=test-key", "TINY_MODEL=claude-sonnet-4-5"},
	"responses": {"TINY_PROVIDER=openai-responses", "OPENAI_API_KEY=test-key", "TINY_MODEL=gpt-5.1"},
}

// One-shot: a reply cut off by the token limit while calling a tool runs
// nothing, says so in one line and exits non-zero, with every provider.
func TestOneShotCutOffToolCall(t *testing.T) {
	for name, env := range providerEnvs {
		t.Run(name, func(t *testing.T) {
			srv := providertest.New(t, providertest.Reply{
				Text:         "Writing it now.",
				ToolCalls:    []providertest.ToolCall{toolCall("c1", "bash", `{"command":"touch ran`)},
				FinishReason: "length",
				Usage:        &providertest.Usage{PromptTokens: 100, CompletionTokens: 4096},
			})
			code, stdout, stderr, dir := oneShot(t, srv, env, "write it")
			if reqs := srv.Requests(); len(reqs) != 1 || !strings.HasSuffix(reqs[0].Path, providerPaths[name]) {
				t.Fatalf("requests: %+v", reqs)
			}
			if code == 0 {
				t.Fatalf("exit 0:\n%s", stderr)
			}
			if stdout != "Writing it now.\n" || strings.Count(stderr, cutOffLine) != 1 {
				t.Fatalf("stdout %q\nstderr:\n%s", stdout, stderr)
			}
			if _, err := os.Stat(filepath.Join(dir, "ran")); err == nil {
				t.Fatal("the cut-off call ran")
			}
			st := sessionState(t, dir)
			if st.Usage.Output != 4096 {
				t.Fatalf("the cut-off reply's usage was not recorded: %+v", st.Usage)
			}
			// The billed tokens count in the cost shown (list prices).
			if name != "chat" && !strings.Contains(stderr, "cost $") {
				t.Fatalf("no cost line for the cut-off reply:\n%s", stderr)
			}
		})
	}
}

// One-shot: a reply the model declined keeps its streamed text on stdout,
// says so in one line, exits non-zero and records the usage it reported.
func TestOneShotRefusal(t *testing.T) {
	for name, env := range map[string][]string{"anthropic": providerEnvs["anthropic"], "responses": providerEnvs["responses"]} {
		t.Run(name, func(t *testing.T) {
			srv := providertest.New(t, providertest.Reply{Text: "I can't help with that.", FinishReason: "refusal",
				Usage: &providertest.Usage{PromptTokens: 20, CompletionTokens: 8}})
			code, stdout, stderr, dir := oneShot(t, srv, env, "do the bad thing")
			if code == 0 || stdout != "I can't help with that.\n" || strings.Count(stderr, declinedLine) != 1 {
				t.Fatalf("exit %d\nstdout %q\nstderr:\n%s", code, stdout, stderr)
			}
			if st := sessionState(t, dir); st.Usage.Output != 8 {
				t.Fatalf("usage %+v", st.Usage)
			}
		})
	}
	// OpenAI's content_filter over Chat Completions is the same line,
	// naming its reason.
	srv := providertest.New(t, providertest.Reply{Text: "Here is", FinishReason: "content_filter"})
	code, stdout, stderr, _ := oneShot(t, srv, providerEnvs["chat"], "go")
	if code == 0 || stdout != "Here is\n" || !strings.Contains(stderr, "Failed: "+agent.DeclinedPrefix+" (content_filter)") {
		t.Fatalf("exit %d\nstdout %q\nstderr:\n%s", code, stdout, stderr)
	}
}

func sessionState(t *testing.T, dir string) *session.State {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, ".tiny-agent", "sessions", "*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("%d session files", len(files))
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	st, corrupt := session.Reduce(b)
	if corrupt != nil {
		t.Fatalf("session does not reduce: %v", corrupt)
	}
	return st
}

// Interactive: the same two lines, in a real terminal, over the Responses
// API; the streamed text stays on the screen.
func TestInteractiveCutOffAndRefusal(t *testing.T) {
	needTmux(t)
	srv := providertest.New(t,
		providertest.Reply{Text: "Writing it now.", ToolCalls: []providertest.ToolCall{toolCall("c1", "bash", `{"command":"touch ran`)}, FinishReason: "length"},
		providertest.Reply{Text: "I can't help with that.", FinishReason: "refusal"},
	)
	dir := t.TempDir()
	bin := programAs(t, "tiny-go")
	p := &tmuxPane{t: t, socket: fmt.Sprintf("tinygo-stop-%d", os.Getpid())}
	script := fmt.Sprintf(`cd %s && TERM=tmux-256color TINY_PROVIDER=openai-responses OPENAI_API_KEY=k TINY_MODEL=gpt-5.1 OTEL_SDK_DISABLED=true XDG_CONFIG_HOME=%s TINY_ENDPOINT=%s %s --approval auto; echo EXIT=$?; sleep 60`, dir, t.TempDir(), srv.URL(), bin)
	p.tmux("new-session", "-d", "-x", "120", "-y", "40", "-s", "s", "sh", "-c", script)
	t.Cleanup(func() { killTmux(p.socket) })
	p.waitText("Ctrl+C clears a draft")

	p.text("write it")
	p.keys("Enter")
	p.waitText(cutOffLine)
	p.text("do the bad thing")
	p.keys("Enter")
	p.waitText(declinedLine)
	s := p.screen()
	for _, want := range []string{"Writing it now.", "I can't help with that."} {
		if !strings.Contains(s, want) {
			t.Fatalf("the streamed text %q is gone:\n%s", want, s)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "ran")); err == nil {
		t.Fatal("the cut-off call ran")
	}
	p.keys("C-c", "C-c")
	p.waitText("EXIT=")
}
