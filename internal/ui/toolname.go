package ui

import (
	"strings"

	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/agents"
	"github.com/tiny-agent/tiny-go/internal/todo"
	"github.com/tiny-agent/tiny-go/internal/tools"
)

// namedCall is the header of the calls Claude Code names in words rather
// than by their arguments: a subagent's task is "Task(<description>) ·
// <agent>", a todo list update "Update Todos" (issue 47: their JSON was
// wrapped over two lines). ok is false for other calls.
func namedCall(tool, args string) (string, bool) {
	switch tool {
	case todo.ToolName:
		return "Update Todos", true
	case agents.ToolName:
		members, ok := parseArgs(args)
		if !ok {
			return "", false
		}
		what := stringMember(members, "description")
		if strings.TrimSpace(what) == "" {
			what = strings.SplitN(strings.TrimSpace(stringMember(members, "prompt")), "\n", 2)[0]
		}
		head := "Task(" + sanitizeLine(strings.Join(strings.Fields(what), " ")) + ")"
		if typ := stringMember(members, "subagent_type"); typ != "" {
			head += " · " + sanitizeLine(typ)
		}
		return head, true
	}
	return "", false
}

// hookBlocked begins the result of a call a PreToolUse hook blocked.
var hookBlocked = agent.HookBlockedContent("")

// hookBlockedReport says who refused the call and why: the hook's reason
// (issue 47: only "A PreToolUse hook blocked this tool call" showed).
func hookBlockedReport(content string) toolReport {
	r := toolReport{kind: reportStopped, summary: "blocked by a PreToolUse hook"}
	if reason, ok := strings.CutPrefix(content, hookBlocked+"\nReason: "); ok {
		r.summary += ": " + firstLine(reason)
		if lines := strings.Split(strings.TrimSpace(reason), "\n"); len(lines) > 1 {
			r.preview, r.more = preview(strings.Join(lines[1:], "\n"))
		}
	}
	return r
}

// reviewRejectedReport is a command whose changes the user did not apply
// in review mode: not a failure, and what it printed is its preview
// (issue 47: its first output line showed as "error: …").
func reviewRejectedReport(content string) toolReport {
	out, _, _ := strings.Cut(content, tools.ReviewRejected)
	r := toolReport{kind: reportStopped, summary: "not applied: you declined its changes; the files are as before"}
	if out = strings.TrimSpace(out); out != "" && out != "(no output)" {
		r.preview, r.more = preview(out)
	}
	return r
}
