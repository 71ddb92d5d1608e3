package responses

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/tiny-agent/tiny-go/internal/applypatch"
	"github.com/tiny-agent/tiny-go/internal/provider"
)

// Native item types.
const (
	applyPatchCall = "apply_patch_call"
	shellCall      = "shell_call"
	localShellCall = "local_shell_call"
)

// isNative reports the native call items this package maps.
func isNative(typ string) bool {
	return typ == applyPatchCall || typ == shellCall || typ == localShellCall
}

// The tiny-go tools the native calls become.
const (
	toolWrite = "write"
	toolEdit  = "edit"
	toolBash  = "bash"
)

// nativeCall maps a native call item onto the tiny-go tool call the
// session records: create_file -> write {path, content}; update_file ->
// edit {path, edits} (one replacement per V4A section); delete_file ->
// bash `rm -f -- path`; shell_call and local_shell_call -> bash {command,
// timeout}. An item that cannot be mapped gets arguments that are not a
// JSON object, so the session records the contract's invalidArguments
// result and nothing runs.
func nativeCall(it Item) provider.ToolCall {
	call := provider.ToolCall{ID: it.CallID}
	var args any
	var err error
	switch it.Type {
	case applyPatchCall:
		call.Name, args, err = patchCall(it.Operation)
	case shellCall:
		call.Name = toolBash
		args, err = shellArgs(it.Action)
	case localShellCall:
		call.Name = toolBash
		args, err = localShellArgs(it.Action)
	}
	if err != nil {
		if call.Name == "" {
			call.Name = toolEdit
		}
		b, _ := json.Marshal(it.Type + ": " + err.Error())
		call.Arguments = string(b)
		return call
	}
	b, err := json.Marshal(args)
	if err != nil {
		call.Arguments = `"unencodable arguments"`
		return call
	}
	call.Arguments = string(b)
	return call
}

type writeArgs struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

type editArgs struct {
	Path  string            `json:"path"`
	Edits []applypatch.Edit `json:"edits"`
}

type bashArgs struct {
	Command string   `json:"command"`
	Timeout *float64 `json:"timeout,omitempty"`
}

// patchCall maps an apply_patch operation.
func patchCall(op jsontext.Value) (string, any, error) {
	var o struct {
		Type string `json:"type"`
		Path string `json:"path"`
		Diff string `json:"diff"`
	}
	if err := json.Unmarshal(op, &o); err != nil {
		return "", nil, errors.New("invalid operation")
	}
	if o.Path == "" {
		return "", nil, errors.New("operation without a path")
	}
	switch o.Type {
	case "create_file":
		return toolWrite, writeArgs{Path: o.Path, Content: applypatch.Content(o.Diff)}, nil
	case "update_file":
		edits, err := applypatch.Edits(o.Diff)
		if err != nil {
			return toolEdit, nil, err
		}
		return toolEdit, editArgs{Path: o.Path, Edits: edits}, nil
	case "delete_file":
		return toolBash, bashArgs{Command: "rm -f -- " + shellQuote(o.Path)}, nil
	}
	return "", nil, fmt.Errorf("unknown operation %q", o.Type)
}

// shellArgs maps a shell_call action: its commands run one after the
// other in one shell, as lines of one script.
func shellArgs(action jsontext.Value) (bashArgs, error) {
	var a struct {
		Commands  []string `json:"commands"`
		TimeoutMS *float64 `json:"timeout_ms"`
	}
	if err := json.Unmarshal(action, &a); err != nil || len(a.Commands) == 0 {
		return bashArgs{}, errors.New("an action without commands")
	}
	return bashArgs{Command: strings.Join(a.Commands, "\n"), Timeout: seconds(a.TimeoutMS)}, nil
}

// localShellArgs maps a local_shell_call exec action: argv is quoted for
// sh, except the common ["bash","-lc",script] whose script is run as is;
// a working directory and environment become a cd and exports first.
func localShellArgs(action jsontext.Value) (bashArgs, error) {
	var a struct {
		Command          []string          `json:"command"`
		TimeoutMS        *float64          `json:"timeout_ms"`
		WorkingDirectory string            `json:"working_directory"`
		Env              map[string]string `json:"env"`
	}
	if err := json.Unmarshal(action, &a); err != nil || len(a.Command) == 0 {
		return bashArgs{}, errors.New("an exec action without a command")
	}
	var b strings.Builder
	if a.WorkingDirectory != "" {
		b.WriteString("cd " + shellQuote(a.WorkingDirectory) + " && ")
	}
	for k, v := range a.Env {
		if validName(k) {
			b.WriteString("export " + k + "=" + shellQuote(v) + "; ")
		}
	}
	argv := a.Command
	if len(argv) == 3 && (argv[0] == "bash" || argv[0] == "sh" || argv[0] == "zsh") && (argv[1] == "-lc" || argv[1] == "-c") {
		b.WriteString(argv[2])
	} else {
		for i, w := range argv {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(shellQuote(w))
		}
	}
	return bashArgs{Command: b.String(), Timeout: seconds(a.TimeoutMS)}, nil
}

// validName reports a variable name sh takes.
func validName(s string) bool {
	for i, r := range s {
		if !(r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return s != ""
}

func seconds(ms *float64) *float64 {
	if ms == nil || *ms <= 0 {
		return nil
	}
	s := *ms / 1000
	return &s
}

// shellQuote quotes s for sh.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:@%+,", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// nativeOutput is the output item of the result of a native call: content
// is the tiny-go tool result the session recorded.
func nativeOutput(typ, callID, content string) any {
	switch typ {
	case applyPatchCall:
		status := "completed"
		if !patchSucceeded(content) {
			status = "failed"
		}
		return ApplyPatchCallOutput{Type: "apply_patch_call_output", CallID: callID, Status: status, Output: content}
	case shellCall:
		return ShellCallOutput{Type: "shell_call_output", CallID: callID, Output: []ShellOutput{shellOutput(content)}}
	}
	return LocalShellCallOutput{Type: "local_shell_call_output", ID: callID, Output: content}
}

// patchSucceeded reads a write, edit or rm result: write and edit say
// "Successfully ..."; rm -f prints nothing and bash ends a failure with
// its exit code; a synthetic result starts with "Error:".
func patchSucceeded(content string) bool {
	switch {
	case strings.HasPrefix(content, "Successfully "):
		return true
	case strings.HasPrefix(content, "Error"), strings.Contains(content, "Command exited with code "), strings.Contains(content, "\n\nCommand "):
		return false
	}
	return strings.TrimSpace(content) == "" || content == "(no output)"
}

// The lines bash ends a failed command's result with (internal/tools).
const (
	exitPrefix    = "Command exited with code "
	timeoutPrefix = "Command timed out after "
)

// lastLine splits off the final line of content when it starts with
// prefix, with the blank lines before it; ok is false otherwise.
func lastLine(content, prefix string) (before, line string, ok bool) {
	i := strings.LastIndex(content, prefix)
	if i < 0 || strings.Contains(content[i:], "\n") || i > 0 && content[i-1] != '\n' {
		return "", "", false
	}
	return strings.TrimRight(content[:i], "\n"), content[i:], true
}

// shellOutput reads bash's result back into a command outcome: the exit
// code or the timeout bash appends, else exit 0. bash merges stderr into
// stdout, so stderr stays empty.
func shellOutput(content string) ShellOutput {
	if before, line, ok := lastLine(content, exitPrefix); ok {
		if code, err := strconv.Atoi(strings.TrimPrefix(line, exitPrefix)); err == nil {
			return ShellOutput{Stdout: before, Outcome: ShellOutcome{Type: "exit", ExitCode: &code}}
		}
	}
	if before, _, ok := lastLine(content, timeoutPrefix); ok {
		return ShellOutput{Stdout: before, Outcome: ShellOutcome{Type: "timeout"}}
	}
	zero := 0
	if strings.HasPrefix(content, "Error:") {
		zero = 1 // a synthetic result: the command never ran
	}
	return ShellOutput{Stdout: content, Outcome: ShellOutcome{Type: "exit", ExitCode: &zero}}
}
