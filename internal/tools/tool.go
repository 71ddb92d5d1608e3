// Package tools defines the Tool interface the agent dispatches to and the
// built-in tools of tools.md: bash, read, write, edit and bg.
package tools

import (
	"context"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tiny-agent/tiny-go/internal/session"
)

// Replay policies. Only the built-in read is ever ReplaySafe.
const (
	ReplaySafe  = "safe"
	ReplayNever = "never"
)

// Definition is what the model sees of a tool, plus the identity of anything
// outside the definition that the tool's behaviour depends on.
type Definition struct {
	Name        string
	Description string
	// Parameters is the JSON Schema object of the arguments, as raw JSON.
	Parameters jsontext.Value
	// DefinitionIdentity is empty for built-ins; MCP tools bind their
	// server endpoint here so a changed server changes the digest.
	DefinitionIdentity string
	// Display is the human name shown in logs ("mcp:alias/tool"); empty
	// means Name.
	Display string
}

// Replay declares whether an interrupted call may be run again on resume.
type Replay struct {
	Policy string // ReplaySafe or ReplayNever
	Key    string // e.g. "builtin:read:v1"
}

// Result is the outcome of one tool execution.
type Result struct {
	Content string
	IsError bool
	// Usage, when set, is the tokens the call spent (a subagent's model
	// requests); it is recorded with the result, owned by the call.
	Usage *session.Usage
}

// Tool is one callable tool. Run receives arguments that are already known
// to be a JSON object; it validates fields itself and reports validation
// failures as an error Result, never as a Go error. Run must return promptly
// once ctx is cancelled (the abort path), killing anything it started.
type Tool interface {
	Definition() Definition
	Replay() Replay
	Run(ctx context.Context, args jsontext.Value) Result
}
