package cli

import (
	"strings"

	"github.com/go-json-experiment/json"

	"github.com/tiny-agent/tiny-go/internal/checkpoint"
	"github.com/tiny-agent/tiny-go/internal/session"
)

// commandOf is the command a bash or bg call ran, "" for other tools.
func commandOf(ts *session.ToolStarted) string {
	if ts.ToolName != "bash" && ts.ToolName != "bg" {
		return ""
	}
	var a struct {
		Command string `json:"command"`
	}
	if json.Unmarshal(ts.Arguments, &a, json.RejectUnknownMembers(false)) != nil {
		return ""
	}
	return strings.Clone(a.Command)
}

// beyondCheckpoints names what the commands from seq on did that no
// rewind undoes: one line per kind (checkpoint.Beyond).
func beyondCheckpoints(cwd string, calls []startedCall, seq int64) []string {
	var cs []checkpoint.Call
	for _, c := range calls {
		if c.seq >= seq && c.command != "" {
			cs = append(cs, checkpoint.Call{Label: c.tool + " " + c.toolCall, Command: c.command})
		}
	}
	return checkpoint.Beyond(cwd, cs)
}
