package ui

import (
	"strings"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/tools"
)

// TestTaskAndTodoHeaders: a subagent's task and a todo list update are
// one line in words, as Claude Code shows them, not their JSON.
func TestTaskAndTodoHeaders(t *testing.T) {
	for _, c := range []struct{ tool, args, want string }{
		{"task", `{"description":"review main.go","prompt":"Read main.go and list every bug you find, with line numbers and a fix for each one.","subagent_type":"explore"}`, "◆ Task(review main.go) · explore"},
		{"task", `{"prompt":"find the config loader\nthen more","subagent_type":"general"}`, "◆ Task(find the config loader) · general"},
		{"todo_write", `{"todos":[{"content":"a","status":"pending"},{"content":"b","status":"completed"}]}`, "◆ Update Todos"},
	} {
		got := toolStartLine(agent.ToolInfo{Tool: c.tool, Display: c.tool, Arguments: c.args}, 100)
		if got != c.want {
			t.Errorf("%s header = %q, want %q", c.tool, got, c.want)
		}
	}
	long := toolStartLine(agent.ToolInfo{Tool: "task", Arguments: `{"description":"` + strings.Repeat("word ", 40) + `","prompt":"p","subagent_type":"explore"}`}, 60)
	if w := len([]rune(long)); w > 60 || strings.Contains(long, "\n") {
		t.Errorf("a long task header is not one line of 60: %q", long)
	}
}

// TestRefusalsSayWhoAndWhy: a hook's block names the hook and its
// reason; changes declined in review mode are not an "error" made of the
// command's output.
func TestRefusalsSayWhoAndWhy(t *testing.T) {
	r := buildReport(agent.ToolInfo{Tool: "bash"}, agent.ToolOutcome{Outcome: "failed", Content: agent.HookBlockedContent("rm is not allowed on main\nask the owner")}, nil)
	if r.kind != reportStopped || r.summary != "blocked by a PreToolUse hook: rm is not allowed on main" || strings.Join(r.preview, "|") != "ask the owner" {
		t.Errorf("hook block: %+v", r)
	}
	r = buildReport(agent.ToolInfo{Tool: "bash"}, agent.ToolOutcome{Outcome: "failed", Content: "did-it\n" + tools.ReviewRejected}, nil)
	if r.kind != reportStopped || !strings.HasPrefix(r.summary, "not applied: you declined") || strings.Join(r.preview, "|") != "did-it" {
		t.Errorf("review declined: %+v", r)
	}
}
