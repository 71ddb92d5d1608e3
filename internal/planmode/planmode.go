// Package planmode is plan mode's effect on the tools: while the model
// plans, read runs as usual, bash runs with the whole tree read-only (the
// sandbox makes it so: `ls`, `grep` and `git log` work, `touch` fails and
// changes nothing), and every other call that could change something
// (write, edit, bg, MCP tools) gets a refusal as its result.
//
// The wrapped tools keep their definitions and replay declarations, so the
// configuration a session records does not change with the mode: a
// session planned in plan mode resumes in ask mode and the other way round.
package planmode

import (
	"context"
	"fmt"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tiny-agent/tiny-go/internal/tools"
)

// Config is what the wrapped tools need.
type Config struct {
	// Planning reports whether plan mode is on now.
	Planning func() bool
	// ReadOnlyBash is bash in a read-only sandbox, made on first use.
	ReadOnlyBash func() (tools.Tool, error)
}

// passThrough are the tools that change nothing outside the session (a
// web search only reads), run
// as they are in plan mode (task's children get wrapped tools of their
// own; web_fetch and web_search only read, within the permission rules).
var passThrough = map[string]bool{"read": true, "todo_write": true, "task": true, "diagnostics": true, "web_fetch": true, "web_search": true}

// Wrap returns ts with plan mode applied.
func Wrap(ts []tools.Tool, c Config) []tools.Tool {
	out := make([]tools.Tool, len(ts))
	for i, t := range ts {
		name := t.Definition().Name
		if passThrough[name] || c.Planning == nil {
			out[i] = t
			continue
		}
		out[i] = &tool{Tool: t, name: name, c: c}
	}
	return out
}

type tool struct {
	tools.Tool
	name string
	c    Config
}

// Run implements tools.Tool.
func (t *tool) Run(ctx context.Context, args jsontext.Value) tools.Result {
	if !t.c.Planning() {
		return t.Tool.Run(ctx, args)
	}
	if t.name != "bash" || t.c.ReadOnlyBash == nil {
		return Refusal(t.name)
	}
	bash, err := t.c.ReadOnlyBash()
	if err != nil {
		return tools.Result{Content: fmt.Sprintf("Error: plan mode runs bash with the tree read-only, and that is not possible here: %v. Use read to investigate.", err), IsError: true}
	}
	return bash.Run(ctx, args)
}

// Refusal is the result of a call plan mode does not run.
func Refusal(name string) tools.Result {
	return tools.Result{IsError: true, Content: "Error: " + name + " is not available in plan mode; nothing was run or changed. " +
		"Investigate with read and bash (the tree is read-only), then answer with your plan. " +
		"The user leaves plan mode to have it carried out."}
}

// Reminder is added to each prompt sent in plan mode, so the model knows
// it is planning (the system prompt stays the same in every mode: it is
// part of the session's configuration).
const Reminder = "<system-reminder>Plan mode is on: investigate with read and with bash (the working tree is read-only; " +
	"commands that change files fail), and do not try to make changes. End your reply with a concise, numbered plan " +
	"for the user to accept or change.</system-reminder>"

// Remind returns prompt with the plan-mode reminder when planning.
func Remind(prompt string, planning bool) string {
	if !planning || strings.Contains(prompt, Reminder) {
		return prompt
	}
	return prompt + "\n\n" + Reminder
}

// Accepted is the prompt that carries out an accepted plan.
const Accepted = "The user accepted the plan. Plan mode is off: carry it out now."

// Strip takes the reminder back out of a prompt for display (recaps,
// listings, an editor's replay); a listing's prompt may be cut short
// inside it.
func Strip(s string) string {
	if i := strings.Index(s, "\n\n"+Reminder); i >= 0 {
		return s[:i] + s[i+2+len(Reminder):]
	}
	if i := strings.Index(s, "<system-reminder>Plan mode"); i >= 0 {
		return strings.TrimSpace(s[:i])
	}
	return s
}
