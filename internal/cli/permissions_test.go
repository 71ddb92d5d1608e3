package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/providertest"
)

const envSecret = "sk-live-PERMISSION-TEST-4242"

// secretNowhere fails when the secret is in the session files or in any
// request the model got.
func secretNowhere(t *testing.T, h *hookRun) {
	t.Helper()
	for _, f := range h.sessions() {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), envSecret) {
			t.Errorf("the secret is in the session file %s", f)
		}
	}
	for i, r := range h.srv.Requests() {
		b, _ := json.Marshal(r.Chat)
		if strings.Contains(string(b), envSecret) {
			t.Errorf("the secret reached the model in request %d", i)
		}
	}
}

// A deny rule on Read(./.env) in .claude/settings.json keeps .env from
// the model through read, through bash (cat, cp then read, a symlink) and
// through a subshell, in a one-shot run (approval auto) where nobody is
// asked; the file itself is untouched.
func TestPermissionDenyReadEnv(t *testing.T) {
	h := newHookRun(t, `{"permissions":{"deny":["Read(./.env)"]}}`,
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c1", "read", `{"path":".env"}`)}},
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c2", "bash", `{"command":"cat .env; echo \"[$(cat .env)]\"; cp .env copy.txt; ln -s .env link"}`)}},
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c3", "read", `{"path":"link"}`)}},
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c4", "read", `{"path":"copy.txt"}`)}},
		providertest.Reply{Text: "Done."},
	)
	h.write(".env", "API_KEY="+envSecret+"\n")
	code, stdout, stderr := h.run("show me the key")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if strings.Contains(stdout+stderr, envSecret) {
		t.Errorf("the secret was printed: %s %s", stdout, stderr)
	}
	reqs := h.srv.Requests()
	if len(reqs) != 5 {
		t.Fatalf("%d requests, want 5", len(reqs))
	}
	if got := toolMessage(reqs[1], "c1"); !strings.Contains(got, "Read(./.env)") || !strings.Contains(got, "denied") {
		t.Errorf("read .env: the model was not told the rule denied it: %q", got)
	}
	t.Logf("bash: %q", toolMessage(reqs[2], "c2"))
	if got := toolMessage(reqs[2], "c2"); !strings.Contains(got, "[]") {
		t.Errorf("bash cat .env: want an empty file, got %q", got)
	}
	if got := toolMessage(reqs[3], "c3"); !strings.Contains(got, "denied") {
		t.Errorf("read of a symlink to .env: %q", got)
	}
	secretNowhere(t, h)
	if b, _ := os.ReadFile(filepath.Join(h.dir, ".env")); !strings.Contains(string(b), envSecret) {
		t.Errorf(".env was changed: %q", b)
	}
}

// Allow, ask and deny rules decide bash in a run that asks: an allowed
// command runs without a question, a denied one never runs, an ask rule
// asks even for what "a" allowed; "a" is written to
// .claude/settings.local.json as Bash(word:*), and the next session runs
// that command without asking. `tiny-go config` names each rule's file.
func TestPermissionRulesAskAllowAlways(t *testing.T) {
	bash := func(id, cmd string) providertest.Reply {
		return providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall(id, "bash", `{"command":"`+cmd+`"}`)}}
	}
	h := newHookRun(t, `{"permissions":{"allow":["Bash(echo allowed:*)"],"deny":["Bash(touch denied:*)"],"ask":["Bash(touch asked:*)"]}}`,
		bash("c1", "echo allowed > a.txt"),
		bash("c2", "touch denied"),
		bash("c3", "touch asked"),
		bash("c4", "wc -l a.txt"),
		providertest.Reply{Text: "First done."},
		bash("c5", "wc -c a.txt"),
		providertest.Reply{Text: "Second done."},
	)
	code, stdout, stderr := h.main("n\na\n", "--approval", "ask", "do things")
	if code != 0 || !strings.Contains(stdout, "First done.") {
		t.Fatalf("exit %d: %s\n%s", code, stdout, stderr)
	}
	if n := strings.Count(stderr, "wants to: Run a command"); n != 2 || strings.Contains(stderr, "    echo allowed") || strings.Contains(stderr, "    touch denied") {
		t.Fatalf("asked %d times, want about touch asked and wc only:\n%s", n, stderr)
	}
	if _, err := os.Stat(filepath.Join(h.dir, "denied")); err == nil {
		t.Error("the denied command ran")
	}
	if _, err := os.Stat(filepath.Join(h.dir, "asked")); err == nil {
		t.Error("the command the user refused ran")
	}
	if got := toolMessage(h.srv.Requests()[2], "c2"); !strings.Contains(got, "Bash(touch denied:*)") {
		t.Errorf("the model was not told the rule: %q", got)
	}
	local, err := os.ReadFile(filepath.Join(h.dir, ".claude", "settings.local.json"))
	if err != nil || !strings.Contains(string(local), `"Bash(wc:*)"`) {
		t.Fatalf("settings.local.json: %s, %v", local, err)
	}
	code, stdout, stderr = h.main("", "--approval", "ask", "again")
	if code != 0 || !strings.Contains(stdout, "Second done.") || strings.Contains(stderr, "wants to") {
		t.Fatalf("the new session asked or failed: exit %d\n%s\n%s", code, stdout, stderr)
	}
	code, stdout, _ = h.main("", "config")
	for _, want := range []string{"deny", "Bash(touch denied:*)", filepath.Join(h.dir, ".claude", "settings.json"), "Bash(wc:*)", filepath.Join(h.dir, ".claude", "settings.local.json")} {
		if code != 0 || !strings.Contains(stdout, want) {
			t.Errorf("config lacks %q:\n%s", want, stdout)
		}
	}
	code, stdout, stderr = h.main("", "config", "--json")
	var out struct {
		Permissions struct {
			Rules []struct{ Kind, Rule, Source string }
		}
	}
	if err := json.Unmarshal([]byte(stdout), &out); code != 0 || err != nil || len(out.Permissions.Rules) != 4 {
		t.Errorf("config --json: exit %d, %v, %+v\n%s", code, err, out, stderr)
	}
}

// defaultMode acceptEdits in interactive mode: a write in the project and
// one in an additional directory run without a question, a command is
// still asked about; the additional directory is writable for commands.
func TestPermissionAcceptEditsAndAdditionalDirectories(t *testing.T) {
	h := newHookRun(t, `{"permissions":{"defaultMode":"acceptEdits","additionalDirectories":["../shared"]}}`,
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c1", "write", `{"path":"a.txt","content":"a\n"}`)}},
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c2", "write", `{"path":"../shared/b.txt","content":"b\n"}`)}},
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c3", "bash", `{"command":"echo c > ../shared/c.txt"}`)}},
		providertest.Reply{Text: "Done."},
	)
	shared := filepath.Join(filepath.Dir(h.dir), "shared")
	if err := os.Mkdir(shared, 0o755); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := h.main("write them\ny\n/exit\n")
	if code != 0 || !strings.Contains(stdout, "Done.") {
		t.Fatalf("exit %d: %s\n%s", code, stdout, stderr)
	}
	if n := strings.Count(stdout+stderr, "wants to:"); n != 1 || !strings.Contains(stdout+stderr, "wants to: Run a command") {
		t.Errorf("asked %d times, want once, about the command:\n%s\n%s", n, stdout, stderr)
	}
	for _, p := range []string{filepath.Join(h.dir, "a.txt"), filepath.Join(shared, "b.txt"), filepath.Join(shared, "c.txt")} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s was not written: %v", p, err)
		}
	}
}

// A subagent is held to the same rules: its read of .env is refused.
func TestPermissionDenyHoldsInSubagents(t *testing.T) {
	h := newHookRun(t, `{"permissions":{"deny":["Read(.env)"]}}`,
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c1", "task", `{"description":"look","prompt":"read .env","subagent_type":"general-purpose"}`)}},
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("s1", "read", `{"path":".env"}`)}},
		providertest.Reply{Text: "The child could not read it."},
		providertest.Reply{Text: "Done."},
	)
	h.write(".env", "API_KEY="+envSecret+"\n")
	code, _, stderr := h.run("delegate")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if got := toolMessage(h.srv.Requests()[2], "s1"); !strings.Contains(got, "Read(.env)") {
		t.Errorf("the subagent's read: %q", got)
	}
	secretNowhere(t, h)
}

// `tiny-go config --json` is one valid JSON object with hooks (whose
// timeouts once broke it), permission rules and instruction files.
func TestConfigJSONWithHooksAndRules(t *testing.T) {
	h := newHookRun(t, `{"hooks":{"PreToolUse":[{"matcher":"Agent","hooks":[{"type":"command","command":"true","timeout":5}]}]},"permissions":{"deny":["Read(./.env)"],"defaultMode":"plan"}}`)
	h.write("CLAUDE.md", "Be brief.\n")
	code, stdout, stderr := h.main("", "config", "--json")
	var out struct {
		Hooks []struct {
			Event   string
			Timeout float64
		}
		Permissions struct {
			Rules       []struct{ Kind, Rule, Source string }
			DefaultMode string
		}
		Instructions []struct {
			Path  string
			Bytes int
		}
	}
	if err := json.Unmarshal([]byte(stdout), &out); code != 0 || err != nil {
		t.Fatalf("exit %d, %v:\n%s\n%s", code, err, stdout, stderr)
	}
	if len(out.Hooks) != 1 || out.Hooks[0].Timeout != 5 || len(out.Permissions.Rules) != 1 || out.Permissions.DefaultMode != "plan" ||
		len(out.Instructions) != 1 || out.Instructions[0].Bytes != 10 {
		t.Errorf("config --json: %+v", out)
	}
}

// An ask rule asks even about a read, and even after an "always" answer
// that covers the command.
func TestPermissionAskRuleAsksAboutReads(t *testing.T) {
	h := newHookRun(t, `{"permissions":{"ask":["Read(./notes.txt)","Bash(cat:*)"]}}`,
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c1", "read", `{"path":"notes.txt"}`)}},
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c2", "bash", `{"command":"cat notes.txt"}`)}},
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c3", "bash", `{"command":"cat notes.txt"}`)}},
		providertest.Reply{Text: "Done."},
	)
	h.write("notes.txt", "private notes\n")
	code, stdout, stderr := h.main("n\na\nn\n", "--approval", "ask", "read them")
	if code != 0 || !strings.Contains(stdout, "Done.") {
		t.Fatalf("exit %d:\n%s\n%s", code, stdout, stderr)
	}
	if n := strings.Count(stderr, "wants to:"); n != 3 {
		t.Errorf("asked %d times, want 3 (the read, and cat twice):\n%s", n, stderr)
	}
	reqs := h.srv.Requests()
	if got := toolMessage(reqs[1], "c1"); !strings.Contains(got, "denied") {
		t.Errorf("the refused read: %q", got)
	}
	if got := toolMessage(reqs[3], "c3"); !strings.Contains(got, "denied") {
		t.Errorf("the second cat ran on the strength of the first answer: %q", got)
	}
}

// In an interactive session in auto mode an ask rule still asks; a
// one-shot run in auto mode, where nobody can answer, refuses the call.
func TestPermissionAskRuleInAutoMode(t *testing.T) {
	h := newHookRun(t, `{"permissions":{"ask":["Bash(touch:*)"]}}`,
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c1", "bash", `{"command":"touch asked"}`)}},
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c2", "bash", `{"command":"echo free > free.txt"}`)}},
		providertest.Reply{Text: "Done."},
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c3", "bash", `{"command":"touch oneshot"}`)}},
		providertest.Reply{Text: "Done again."},
	)
	code, stdout, stderr := h.main("go\nn\n/exit\n", "--approval", "auto")
	if code != 0 || !strings.Contains(stdout, "Done.") {
		t.Fatalf("exit %d:\n%s\n%s", code, stdout, stderr)
	}
	if n := strings.Count(stdout+stderr, "wants to:"); n != 1 {
		t.Errorf("asked %d times, want once (touch):\n%s\n%s", n, stdout, stderr)
	}
	if _, err := os.Stat(filepath.Join(h.dir, "asked")); err == nil {
		t.Error("the refused command ran")
	}
	if _, err := os.Stat(filepath.Join(h.dir, "free.txt")); err != nil {
		t.Error("auto mode asked about or refused a command no rule names")
	}
	code, _, stderr = h.main("", "again")
	if code != 0 {
		t.Fatalf("one-shot: exit %d: %s", code, stderr)
	}
	reqs := h.srv.Requests()
	if got := toolMessage(reqs[len(reqs)-1], "c3"); !strings.Contains(got, "cannot ask") {
		t.Errorf("one-shot ask rule: %q", got)
	}
}
