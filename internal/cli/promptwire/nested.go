package promptwire

import (
	"context"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/prompt"
	"github.com/tiny-agent/tiny-go/internal/session"
)

// ResultNote is the agent's ResultNote: first what before adds (the
// language servers' diagnostics a change introduced; nil: nothing), then
// the instruction files of a subdirectory of cwd the call is the first
// to work in (a call that failed worked nowhere). st is the session's
// state (nil: a new one), whose active context may hold files already
// given; hidden is what Read deny rules hide (nil: nothing).
func ResultNote(cwd string, hidden func() []string, st *session.State, before agent.ResultNote) agent.ResultNote {
	var active []string
	if st != nil {
		for _, m := range st.ActiveContext {
			if m.Content != nil {
				active = append(active, *m.Content)
			}
		}
	}
	nested := prompt.NewNested(cwd, hidden, active)
	return func(ctx context.Context, id, tool string, args jsontext.Value, failed bool) string {
		var note string
		if before != nil {
			note = before(ctx, id, tool, args, failed)
		}
		if failed {
			return note
		}
		return note + nested.For(workedPath(tool, args))
	}
}

// workedPath is the file a read, write or edit worked on ("" for other
// tools), under tiny-go's name for the argument or Claude Code's.
func workedPath(tool string, args jsontext.Value) string {
	switch tool {
	case "read", "write", "edit", "Read", "Write", "Edit", "MultiEdit":
	default:
		return ""
	}
	var in struct {
		Path     string `json:"path"`
		FilePath string `json:"file_path"`
	}
	if json.Unmarshal(args, &in) != nil {
		return ""
	}
	for _, p := range []string{in.Path, in.FilePath} {
		if p = strings.TrimSpace(p); p != "" {
			return p
		}
	}
	return ""
}
