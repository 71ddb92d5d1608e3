package tools

import (
	"context"
	"fmt"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tiny-agent/tiny-go/internal/sandbox"
)

// writeTool is the built-in write.
type writeTool struct {
	workDir string
	sandbox *sandbox.Sandbox
	editor  Editor // nil: the local file system
}

func (writeTool) Definition() Definition {
	return Definition{
		Name: "write",
		Description: "Write content to a file, replacing it if it exists. Parent directories are created. " +
			"The write is atomic and an existing file keeps its permissions. " +
			"Prefer edit for changing part of an existing file. Relative paths resolve against the working directory.",
		Parameters: jsontext.Value(`{"type":"object","properties":{` +
			`"path":{"type":"string","description":"Path of the file to write (relative to the working directory, or absolute)."},` +
			`"content":{"type":"string","description":"The complete new content of the file."}` +
			`},"required":["path","content"]}`),
	}
}

func (writeTool) Replay() Replay { return Replay{Policy: ReplayNever, Key: "builtin:write:v1"} }

func (w writeTool) Run(ctx context.Context, args jsontext.Value) Result {
	var a struct {
		Path    jsontext.Value `json:"path"`
		Content jsontext.Value `json:"content"`
	}
	if err := decodeArgs(args, &a); err != nil {
		return errorResult(err)
	}
	path, err := nonEmptyString("path", a.Path)
	if err != nil {
		return errorResult(err)
	}
	content, err := anyString("content", a.Content)
	if err != nil {
		return errorResult(err)
	}
	if ctx.Err() != nil {
		return Result{Content: "Write aborted; the file was not changed.", IsError: true}
	}
	abs := resolvePath(w.workDir, path)
	if err := w.sandbox.CheckWrite(path, abs); err != nil {
		return errorResult(err)
	}
	if editorWrites(w.editor) {
		if err := w.editor.WriteTextFile(ctx, abs, content); err != nil {
			return errorResult(failf("Could not write %s through the editor: %v", path, err))
		}
	} else if err := w.sandbox.Do(func() error { return writeFileAtomic(abs, []byte(content)) }); err != nil {
		return Result{Content: describeFileError(path, err), IsError: true}
	}
	return Result{Content: fmt.Sprintf("Successfully wrote %d bytes to %s.", len(content), path)}
}
