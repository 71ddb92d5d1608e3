// Package cctools maps tiny-go's tool calls to the names and input shapes
// Claude Code uses, and back. Hooks, subagents and the headless (Claude
// Agent SDK) protocol all speak Claude Code's vocabulary; this package is
// the one place that vocabulary is defined, so the three cannot drift.
//
// The mapping is pure: no file system, no process state. Paths are made
// absolute against the working directory the caller passes, because Claude
// Code's file tools always carry absolute paths.
package cctools

import (
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Claude Code's names for the tools tiny-go has an equivalent of.
const (
	Bash       = "Bash"
	BashOutput = "BashOutput"
	KillShell  = "KillShell"
	Read       = "Read"
	Write      = "Write"
	Edit       = "Edit"
	MultiEdit  = "MultiEdit"
	Task       = "Task"
	Agent      = "Agent" // Task's name since Claude Code 2.1
	TodoWrite  = "TodoWrite"
	// WebFetch is web_fetch; its input ({url, prompt}) is the same in
	// both vocabularies.
	WebFetch = "WebFetch"
	// WebSearch is web_search; its input is Claude Code's as it is
	// ({query, allowed_domains, blocked_domains}).
	WebSearch = "WebSearch"
)

// Call is one tool call in Claude Code's terms.
type Call struct {
	Name  string         // Claude Code's tool name ("Bash", "mcp__server__tool")
	Input jsontext.Value // the input object in Claude Code's shape
}

// ToClaude names a tiny-go call the way Claude Code would, with its input
// in Claude Code's shape. A tool with no Claude Code equivalent keeps its
// own name and arguments. Arguments that are not a JSON object are passed
// through unchanged: the tool itself reports them.
func ToClaude(tool string, args jsontext.Value, cwd string) Call {
	var m map[string]any
	if json.Unmarshal(args, &m) != nil {
		return Call{Name: claudeName(tool, nil), Input: args}
	}
	name := claudeName(tool, m)
	in := claudeInput(tool, name, m, cwd)
	if in == nil {
		return Call{Name: name, Input: args}
	}
	out, err := json.Marshal(in, json.Deterministic(true))
	if err != nil {
		return Call{Name: name, Input: args}
	}
	return Call{Name: name, Input: out}
}

// Names returns every name a call answers to, tiny-go's own first, so a
// matcher written for either vocabulary matches.
func Names(tool string, args jsontext.Value) []string {
	var m map[string]any
	_ = json.Unmarshal(args, &m)
	cc := claudeName(tool, m)
	switch {
	case cc == tool:
		return []string{tool}
	case cc == Agent:
		// Claude Code 2.1 names its subagent tool Agent, earlier versions
		// Task; matchers written for either name match.
		return []string{tool, Task, Agent}
	}
	return []string{tool, cc}
}

// ClaudeName is Claude Code's name of a tiny-go tool when the arguments do
// not matter (a list of offered tools): bash is Bash, edit is Edit, bg is
// Bash (its start action is Bash in the background).
func ClaudeName(tool string) string { return claudeName(tool, nil) }

func claudeName(tool string, args map[string]any) string {
	switch tool {
	case "bash":
		return Bash
	case "read":
		return Read
	case "write":
		return Write
	case "edit":
		if edits, ok := args["edits"].([]any); ok && len(edits) > 1 {
			return MultiEdit
		}
		return Edit
	case "bg":
		switch args["action"] {
		case "status", "logs":
			return BashOutput
		case "stop":
			return KillShell
		case nil, "start":
			return Bash
		}
		return tool
	case "task":
		return Agent
	case "todo_write":
		return TodoWrite
	case "web_fetch":
		return WebFetch
	case "web_search":
		return WebSearch
	}
	// MCP tools are named as Claude Code names them (mcp.ToolName).
	return tool
}

// claudeInput builds Claude Code's input object, or nil to keep the
// arguments as they are.
func claudeInput(tool, name string, a map[string]any, cwd string) map[string]any {
	abs := func(v any) any {
		p, ok := v.(string)
		if !ok || p == "" || filepath.IsAbs(p) || cwd == "" {
			return v
		}
		return filepath.Join(cwd, p)
	}
	switch tool {
	case "bash":
		in := map[string]any{"command": a["command"]}
		if t, ok := a["timeout"].(float64); ok {
			in["timeout"] = t * 1000 // seconds -> milliseconds
		}
		// A model used to Claude Code's Bash may say what its command is
		// for; hooks and SDKs read it there.
		copyKeys(in, a, "description")
		return in
	case "bg":
		switch name {
		case Bash:
			in := map[string]any{"command": a["command"], "run_in_background": true}
			copyKeys(in, a, "description")
			return in
		case BashOutput:
			return map[string]any{"bash_id": a["id"]}
		case KillShell:
			return map[string]any{"shell_id": a["id"]}
		}
		return nil
	case "read":
		in := map[string]any{"file_path": abs(a["path"])}
		copyKeys(in, a, "offset", "limit")
		return in
	case "write":
		return map[string]any{"file_path": abs(a["path"]), "content": a["content"]}
	case "edit":
		return editInput(name, a, abs)
	}
	return nil
}

func editInput(name string, a map[string]any, abs func(any) any) map[string]any {
	edits, _ := a["edits"].([]any)
	var out []any
	for _, e := range edits {
		em, _ := e.(map[string]any)
		out = append(out, map[string]any{"old_string": em["oldText"], "new_string": em["newText"]})
	}
	if name == MultiEdit {
		return map[string]any{"file_path": abs(a["path"]), "edits": out}
	}
	in := map[string]any{"file_path": abs(a["path"])}
	if len(out) == 1 {
		one := out[0].(map[string]any)
		in["old_string"], in["new_string"], in["replace_all"] = one["old_string"], one["new_string"], false
	}
	return in
}

func copyKeys(dst, src map[string]any, keys ...string) {
	for _, k := range keys {
		if v, ok := src[k]; ok {
			dst[k] = v
		}
	}
}

// ErrUnsupported says an input in Claude Code's shape asks for something
// tiny-go's tool cannot do (Edit's replace_all, for one).
var ErrUnsupported = errors.New("not supported by tiny-go")

// FromClaude turns an input in Claude Code's shape (a hook's or the SDK's
// updatedInput) back into arguments for the tiny-go tool that is being
// called. An input already in tiny-go's shape is accepted as it is.
func FromClaude(tool string, input jsontext.Value) (jsontext.Value, error) {
	var in map[string]any
	if err := json.Unmarshal(input, &in); err != nil {
		return nil, fmt.Errorf("the input is not a JSON object: %w", err)
	}
	out, err := tinyArgs(tool, in)
	if err != nil || out == nil {
		return input, err
	}
	return json.Marshal(out, json.Deterministic(true))
}

func tinyArgs(tool string, in map[string]any) (map[string]any, error) {
	path, hasPath := in["file_path"]
	switch tool {
	case "bash":
		out := map[string]any{"command": in["command"]}
		if t, ok := in["timeout"].(float64); ok {
			out["timeout"] = t / 1000
		}
		copyKeys(out, in, "description")
		return out, nil
	case "read":
		if !hasPath {
			return nil, nil
		}
		out := map[string]any{"path": path}
		copyKeys(out, in, "offset", "limit")
		return out, nil
	case "write":
		if !hasPath {
			return nil, nil
		}
		return map[string]any{"path": path, "content": in["content"]}, nil
	case "edit":
		if !hasPath {
			return nil, nil
		}
		return editArgs(path, in)
	case "bg":
		if c, ok := in["command"]; ok {
			out := map[string]any{"action": "start", "command": c}
			copyKeys(out, in, "description")
			return out, nil
		}
		if id, ok := in["bash_id"]; ok {
			return map[string]any{"action": "logs", "id": id}, nil
		}
		if id, ok := in["shell_id"]; ok {
			return map[string]any{"action": "stop", "id": id}, nil
		}
	}
	return nil, nil
}

func editArgs(path any, in map[string]any) (map[string]any, error) {
	list, multi := in["edits"].([]any)
	if !multi {
		list = []any{in}
	}
	var edits []any
	for _, e := range list {
		em, _ := e.(map[string]any)
		if em == nil {
			return nil, fmt.Errorf("edits: each edit must be an object")
		}
		if ra, _ := em["replace_all"].(bool); ra {
			return nil, fmt.Errorf("edit with replace_all: %w; give each occurrence as its own edit", ErrUnsupported)
		}
		if _, ok := em["oldText"]; ok {
			edits = append(edits, map[string]any{"oldText": em["oldText"], "newText": em["newText"]})
			continue
		}
		edits = append(edits, map[string]any{"oldText": em["old_string"], "newText": em["new_string"]})
	}
	return map[string]any{"path": path, "edits": edits}, nil
}

// TinyName is tiny-go's name of a tool Claude Code names (for allow and
// deny lists such as --allowedTools Bash,Read). MCP tools have the same
// name in both (mcp__server__tool); unknown names are returned as they are.
func TinyName(claude string) string {
	switch claude {
	case Bash:
		return "bash"
	case Read:
		return "read"
	case Write:
		return "write"
	case Edit, MultiEdit:
		return "edit"
	case BashOutput, KillShell:
		return "bg"
	case Task, Agent:
		return "task"
	case TodoWrite:
		return "todo_write"
	case WebFetch:
		return "web_fetch"
	case WebSearch:
		return "web_search"
	}
	return claude
}

// Response is the tool_response a PostToolUse hook (and the SDK) sees, in
// the shape Claude Code gives for the tool: Bash's stdout and stderr, the
// file tools' filePath. Other tools get {content, is_error}.
func Response(tool string, args jsontext.Value, cwd, content string, isError bool) jsontext.Value {
	call := ToClaude(tool, args, cwd)
	var in map[string]any
	_ = json.Unmarshal(call.Input, &in)
	var r map[string]any
	switch call.Name {
	case Bash:
		r = map[string]any{"stdout": bashStdout(content), "stderr": "", "interrupted": false, "isImage": false, "noOutputExpected": false}
	case Agent:
		// Claude Code's subagent result: the answer as text blocks.
		r = map[string]any{"status": "completed", "prompt": in["prompt"], "agentType": in["subagent_type"],
			"content": []any{map[string]any{"type": "text", "text": content}}}
	case Write, Edit, MultiEdit, Read:
		r = map[string]any{"filePath": in["file_path"], "success": !isError, "content": content}
	default:
		r = map[string]any{"content": content, "is_error": isError}
	}
	out, _ := json.Marshal(r, json.Deterministic(true))
	return out
}

// bashStdout is a command's output as Claude Code's Bash reports it:
// without the trailing newline, and empty rather than "(no output)".
func bashStdout(content string) string {
	if content == noOutput {
		return ""
	}
	return strings.TrimRight(content, "\n")
}

// noOutput is what the bash tool says for a command that printed nothing.
const noOutput = "(no output)"

// exitSuffix ends the bash tool's result of a command that failed.
var exitSuffix = regexp.MustCompile(`\n\nCommand exited with code (\d+)$`)

// FailureError is a failed call's error as a PostToolUseFailure hook (and
// the SDK) sees it: Claude Code's "Exit code N" first for a command, then
// what it printed; other tools' results as they are.
func FailureError(tool, content string) string {
	if tool != "bash" {
		return content
	}
	m := exitSuffix.FindStringSubmatchIndex(content)
	if m == nil {
		return content
	}
	out := bashStdout(content[:m[0]])
	head := "Exit code " + content[m[2]:m[3]]
	if out == "" {
		return head
	}
	return head + "\n" + out
}

// TinyCall is the tiny-go call a Claude Code call stands for: Bash with
// run_in_background is bg's start, every other name as TinyName says.
func TinyCall(c Call) (tool string, args jsontext.Value, err error) {
	tool = TinyName(c.Name)
	if tool == "bash" {
		var in struct {
			Background bool `json:"run_in_background"`
		}
		if json.Unmarshal(c.Input, &in) == nil && in.Background {
			tool = "bg"
		}
	}
	args, err = FromClaude(tool, c.Input)
	return tool, args, err
}
