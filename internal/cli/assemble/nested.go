package assemble

import (
	"context"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/prompt"
)

// resultNote is the agent's ResultNote: the diagnostics a change
// introduced (language servers), then the instruction files of a
// subdirectory the call is the first to work in (a call that failed
// worked nowhere).
func (a *Runner) ResultNote() agent.ResultNote {
	var active []string
	if a.Store != nil {
		for _, m := range a.Store.State().ActiveContext {
			if m.Content != nil {
				active = append(active, *m.Content)
			}
		}
	}
	nested := prompt.NewNested(a.Cwd, a.Guard.HiddenPaths(), active)
	lsp := a.LSP.note()
	return func(ctx context.Context, id, tool string, args jsontext.Value, failed bool) string {
		var note string
		if lsp != nil {
			note = lsp(ctx, id, tool, args, failed)
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
	return FirstNonEmpty(in.Path, in.FilePath)
}
