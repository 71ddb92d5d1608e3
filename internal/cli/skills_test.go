package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/providertest"
)

// Skills kept where Claude Code users keep them are offered by name and
// description (the body stays out of the system message); reading a
// skill's file puts its allowed-tools in effect, so its command runs
// without a question while another is still asked about; /name runs the
// skill as /skill:name does.
func TestClaudeSkills(t *testing.T) {
	bash := func(id, cmd string) providertest.Reply {
		return providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall(id, "bash", `{"command":"`+cmd+`"}`)}}
	}
	h := newHookRun(t, "",
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c1", "read", `{"path":".claude/skills/deploy/SKILL.md"}`)}},
		bash("c2", "touch via-read"),
		bash("c3", "mkdir not-allowed"),
		providertest.Reply{Text: "Deployed."},
		bash("c4", "touch via-slash"),
		providertest.Reply{Text: "Deployed again."},
	)
	h.write(".claude/skills/deploy/SKILL.md", "---\nname: deploy\ndescription: Use when: the user wants to deploy\nallowed-tools: Bash(touch:*), Read\n---\nDEPLOY-BODY: run touch.\n")
	h.write(".agents/skills/lint/SKILL.md", "---\nname: lint\ndescription: Lints the code\n---\nLINT-BODY\n")
	mine := filepath.Join(h.home, ".claude", "skills", "notes", "SKILL.md")
	if err := os.MkdirAll(filepath.Dir(mine), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(mine, []byte("---\nname: notes\ndescription: Personal notes\n---\nNOTES-BODY\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := h.main("deploy it\nn\n", "--approval", "ask")
	if code != 0 || !strings.Contains(stdout, "Deployed.") {
		t.Fatalf("exit %d:\n%s\n%s", code, stdout, stderr)
	}
	if n := strings.Count(stdout+stderr, "wants to: Run a command"); n != 1 || !strings.Contains(stdout+stderr, "    mkdir not-allowed") {
		t.Errorf("asked %d times, want only about mkdir not-allowed:\n%s\n%s", n, stdout, stderr)
	}
	if _, err := os.Stat(filepath.Join(h.dir, "not-allowed")); err == nil {
		t.Error("the refused command ran")
	}
	if _, err := os.Stat(filepath.Join(h.dir, "via-read")); err != nil {
		t.Errorf("the skill's allowed command did not run: %v", err)
	}
	sys := systemMessage(t, h.srv.Requests()[0])
	for _, want := range []string{"<name>deploy</name><description>Use when: the user wants to deploy</description>", "<name>lint</name>", "<name>notes</name>", mine} {
		if !strings.Contains(sys, want) {
			t.Errorf("the skill index lacks %q:\n%s", want, sys)
		}
	}
	for _, body := range []string{"DEPLOY-BODY", "LINT-BODY", "NOTES-BODY"} {
		if strings.Contains(sys, body) {
			t.Errorf("a skill body is in the system message: %s", body)
		}
	}
	code, stdout, stderr = h.main("/deploy now\n/exit\n", "--approval", "ask")
	if code != 0 || !strings.Contains(stdout, "Deployed again.") || strings.Contains(stdout+stderr, "wants to") {
		t.Fatalf("/deploy: exit %d:\n%s\n%s", code, stdout, stderr)
	}
	reqs := h.srv.Requests()
	if got := hookLastUser(reqs[len(reqs)-2]); !strings.Contains(got, "DEPLOY-BODY") || !strings.Contains(got, "User: now") {
		t.Errorf("/deploy sent %q", got)
	}
}
