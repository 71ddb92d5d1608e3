package agents

import (
	"context"
	"fmt"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/tiny-agent/tiny-go/internal/tools"
)

// ToolName is the task tool's name (cctools maps it to Claude Code's Task).
const ToolName = "task"

// Call is one piece of work handed to a child.
type Call struct {
	// StartedID is the parent's toolStarted id of the call: the child's
	// session is keyed by it, so a continued call finds its child.
	StartedID   string
	Agent       Definition
	Description string
	Prompt      string
}

// Runner runs (or, for a call a crash left open, continues) the child of
// call and returns its last answer as the tool result, with the tokens it
// spent. It returns promptly once ctx ends, having aborted the child
// durably.
type Runner func(ctx context.Context, call Call) tools.Result

// Tool is the task tool: {description, prompt, subagent_type}, Claude
// Code's Task.
type Tool struct {
	defs []Definition
	run  Runner
}

// NewTool offers defs through run.
func NewTool(defs []Definition, run Runner) *Tool { return &Tool{defs: defs, run: run} }

// Definition implements tools.Tool: the agents' names and descriptions are
// in the description, so the model knows what it can hand off.
func (t *Tool) Definition() tools.Definition {
	var b strings.Builder
	b.WriteString("Hand a self-contained task to a subagent, which works on it with its own context and tools and returns its final report as this tool's result. " +
		"Use it for broad searches or independent pieces of work; several task calls in one reply run in parallel. " +
		"The subagent sees only the prompt you give it: include every detail it needs, and say what to report back.\n\nAvailable agents (subagent_type):\n")
	for _, d := range t.defs {
		fmt.Fprintf(&b, "- %s: %s\n", d.Name, d.Description)
	}
	names := make([]string, len(t.defs))
	for i, d := range t.defs {
		names[i] = d.Name
	}
	enum, _ := json.Marshal(names)
	return tools.Definition{
		Name:        ToolName,
		Description: strings.TrimRight(b.String(), "\n"),
		Parameters: jsontext.Value(`{"type":"object","properties":{` +
			`"description":{"type":"string","description":"A short (3-5 word) description of the task."},` +
			`"prompt":{"type":"string","description":"The task for the subagent, complete and self-contained."},` +
			`"subagent_type":{"type":"string","enum":` + string(enum) + `,"description":"The agent to use."}` +
			`},"required":["description","prompt","subagent_type"]}`),
	}
}

// Replay implements tools.Tool. A task is never run again from the start
// (runtime.md §2); a call a crash left open is continued instead
// (ContinuesAfterCrash): its child is a session that resumes on its own.
func (t *Tool) Replay() tools.Replay {
	return tools.Replay{Policy: tools.ReplayNever, Key: "tiny-go:task:v1"}
}

// ContinuesAfterCrash implements tools.Continuable.
func (t *Tool) ContinuesAfterCrash() bool { return true }

// RunsConcurrently implements tools.Concurrent.
func (t *Tool) RunsConcurrently() bool { return true }

// Run implements tools.Tool.
func (t *Tool) Run(ctx context.Context, args jsontext.Value) tools.Result {
	c, err := t.parse(args)
	if err != nil {
		return tools.Result{Content: "Error: " + err.Error(), IsError: true}
	}
	c.StartedID = tools.StartedID(ctx)
	return t.run(ctx, c)
}

// ParseArgs validates task arguments against defs.
func (t *Tool) parse(args []byte) (Call, error) {
	var a struct {
		Description *string `json:"description"`
		Prompt      *string `json:"prompt"`
		Type        *string `json:"subagent_type"`
	}
	if err := json.Unmarshal(args, &a); err != nil {
		return Call{}, fmt.Errorf("task arguments must be {\"description\", \"prompt\", \"subagent_type\"} strings")
	}
	switch {
	case a.Prompt == nil || strings.TrimSpace(*a.Prompt) == "":
		return Call{}, fmt.Errorf("prompt must be a non-empty string: the whole task for the subagent")
	case a.Type == nil || *a.Type == "":
		return Call{}, fmt.Errorf("subagent_type is required: one of %s", t.names())
	}
	d, ok := Find(t.defs, *a.Type)
	if !ok {
		return Call{}, fmt.Errorf("unknown subagent_type %q: use one of %s", *a.Type, t.names())
	}
	c := Call{Agent: d, Prompt: *a.Prompt}
	if a.Description != nil {
		c.Description = strings.Join(strings.Fields(*a.Description), " ")
	}
	return c, nil
}

func (t *Tool) names() string {
	n := make([]string, len(t.defs))
	for i, d := range t.defs {
		n[i] = d.Name
	}
	return strings.Join(n, ", ")
}
