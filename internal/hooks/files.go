package hooks

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/aymanbagabas/go-udiff"
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/cctools"
)

// Claude Code's file tools report the file itself to PostToolUse hooks
// (its content, the original, a structured patch); hooks that format or
// check what was written read those. The original is read when the call
// is about to start, the result once it is committed.

// maxOriginal bounds a file kept in memory for its patch.
const maxOriginal = 4 << 20

// original is a file as it was before a write or edit.
type original struct {
	content string
	existed bool
}

// keepOriginal reads the file a write or edit is about to change.
func (r *Runner) keepOriginal(call agent.HookCall) {
	if call.Tool != "write" && call.Tool != "edit" {
		return
	}
	path := r.filePath(call)
	if path == "" {
		return
	}
	o := original{}
	if st, err := os.Stat(path); err == nil && st.Mode().IsRegular() && st.Size() <= maxOriginal {
		if b, err := os.ReadFile(path); err == nil {
			o = original{content: string(b), existed: true}
		}
	} else if err == nil {
		return // too large, or not a file: the short shape
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.originals == nil {
		r.originals = map[string]original{}
	}
	r.originals[call.Key] = o
}

func (r *Runner) filePath(call agent.HookCall) string {
	in := map[string]any{}
	_ = json.Unmarshal(cctools.ToClaude(call.Tool, call.Arguments, r.opt.Cwd).Input, &in)
	p, _ := in["file_path"].(string)
	if p != "" && !filepath.IsAbs(p) {
		p = filepath.Join(r.opt.Cwd, p)
	}
	return p
}

// response is a successful call's tool_response in Claude Code's shape.
func (r *Runner) response(call agent.HookCall, content string) jsontext.Value {
	r.mu.Lock()
	o, known := r.originals[call.Key]
	delete(r.originals, call.Key)
	r.mu.Unlock()
	var resp map[string]any
	switch call.Tool {
	case "write", "edit":
		if known {
			resp = r.changeResponse(call, o)
		}
	case "read":
		resp = r.readResponse(call)
	}
	if resp == nil {
		return cctools.Response(call.Tool, call.Arguments, r.opt.Cwd, content, false)
	}
	out, err := json.Marshal(resp, json.Deterministic(true))
	if err != nil {
		return cctools.Response(call.Tool, call.Arguments, r.opt.Cwd, content, false)
	}
	return out
}

// changeResponse is Write's or Edit's response: the file now, the
// original and the patch between them.
func (r *Runner) changeResponse(call agent.HookCall, o original) map[string]any {
	path := r.filePath(call)
	now, err := os.ReadFile(path)
	if err != nil || len(now) > maxOriginal {
		return nil
	}
	var orig any
	if o.existed {
		orig = o.content
	}
	patch := structuredPatch(o.content, string(now))
	cc := cctools.ToClaude(call.Tool, call.Arguments, r.opt.Cwd)
	if call.Tool == "write" {
		kind := "create"
		if o.existed {
			kind = "update"
		}
		return map[string]any{"type": kind, "filePath": path, "content": string(now),
			"structuredPatch": patch, "originalFile": orig, "userModified": false}
	}
	in := map[string]any{}
	_ = json.Unmarshal(cc.Input, &in)
	resp := map[string]any{"filePath": path, "originalFile": orig, "structuredPatch": patch, "userModified": false}
	if cc.Name == cctools.MultiEdit {
		resp["edits"] = in["edits"]
		return resp
	}
	resp["oldString"], resp["newString"], resp["replaceAll"] = in["old_string"], in["new_string"], false
	return resp
}

// readResponse is Read's response: the lines read, as Claude Code counts
// them (the text split at newlines).
func (r *Runner) readResponse(call agent.HookCall) map[string]any {
	path := r.filePath(call)
	st, err := os.Stat(path)
	if err != nil || !st.Mode().IsRegular() || st.Size() > maxOriginal {
		return nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var a struct {
		Offset int `json:"offset"`
		Limit  int `json:"limit"`
	}
	_ = json.Unmarshal(call.Arguments, &a)
	lines := strings.Split(string(b), "\n")
	start := max(a.Offset, 1)
	from := min(start-1, len(lines))
	to := len(lines)
	if a.Limit > 0 {
		to = min(from+a.Limit, len(lines))
	}
	window := lines[from:to]
	return map[string]any{"type": "text", "file": map[string]any{
		"filePath": path, "content": strings.Join(window, "\n"),
		"numLines": len(window), "startLine": start, "totalLines": len(lines)}}
}

// structuredPatch is Claude Code's patch: hunks of -/+/space lines
// without their newlines, with three lines of context.
func structuredPatch(before, after string) []any {
	hunks := []any{}
	d, err := udiff.ToUnifiedDiff("a", "b", before, udiff.Lines(before, after), udiff.DefaultContextLines)
	if err != nil {
		return hunks
	}
	for _, h := range d.Hunks {
		var lines []string
		oldN, newN := 0, 0
		for _, l := range h.Lines {
			text := strings.TrimSuffix(l.Content, "\n")
			switch l.Kind {
			case udiff.Delete:
				lines, oldN = append(lines, "-"+text), oldN+1
			case udiff.Insert:
				lines, newN = append(lines, "+"+text), newN+1
			default:
				lines, oldN, newN = append(lines, " "+text), oldN+1, newN+1
			}
		}
		hunks = append(hunks, map[string]any{"oldStart": h.FromLine, "oldLines": oldN,
			"newStart": h.ToLine, "newLines": newN, "lines": lines})
	}
	return hunks
}
