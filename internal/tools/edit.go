package tools

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/tiny-agent/tiny-go/internal/sandbox"
)

// editTool is the built-in edit.
type editTool struct {
	workDir string
	sandbox *sandbox.Sandbox
	editor  Editor // nil: the local file system
}

func (editTool) Definition() Definition {
	return Definition{
		Name: "edit",
		Description: "Edit a file by exact text replacement. Each edit replaces oldText with newText; " +
			"every oldText must occur exactly once in the original file (include enough surrounding context " +
			"to make it unique), and edits must not overlap. All edits are matched against the original file " +
			"and applied together, or none is. Line endings are matched as LF; the file keeps its BOM and its " +
			"dominant line ending. Relative paths resolve against the working directory.",
		Parameters: jsontext.Value(`{"type":"object","properties":{` +
			`"path":{"type":"string","description":"Path of the file to edit (relative to the working directory, or absolute)."},` +
			`"edits":{"type":"array","minItems":1,"description":"The replacements to make.","items":{"type":"object","properties":{` +
			`"oldText":{"type":"string","description":"Exact text to replace; must occur exactly once in the file."},` +
			`"newText":{"type":"string","description":"Replacement text."}` +
			`},"required":["oldText","newText"]}}` +
			`},"required":["path","edits"]}`),
	}
}

func (editTool) Replay() Replay { return Replay{Policy: ReplayNever, Key: "builtin:edit:v1"} }

// replacement is one validated edit.
type replacement struct {
	oldText, newText string
}

// maxEditSize bounds the file edit loads into memory.
const maxEditSize = 64 << 20

func (e editTool) Run(ctx context.Context, args jsontext.Value) Result {
	var a struct {
		Path  jsontext.Value `json:"path"`
		Edits jsontext.Value `json:"edits"`
	}
	if err := decodeArgs(args, &a); err != nil {
		return errorResult(err)
	}
	path, err := nonEmptyString("path", a.Path)
	if err != nil {
		return errorResult(err)
	}
	edits, err := parseEdits(a.Edits)
	if err != nil {
		return errorResult(err)
	}
	abs := resolvePath(e.workDir, path)
	if err := e.sandbox.CheckWrite(path, abs); err != nil {
		return errorResult(err)
	}
	var original []byte
	if editorReads(e.editor) {
		text, err := e.editor.ReadTextFile(ctx, abs)
		if err != nil {
			return errorResult(failf("Could not read %s through the editor: %v", path, err))
		}
		original = []byte(text)
	} else if original, err = readBounded(abs, maxEditSize); err != nil {
		return Result{Content: describeFileError(path, err), IsError: true}
	}
	updated, err := applyEdits(original, path, edits)
	if err != nil {
		return errorResult(err)
	}
	if ctx.Err() != nil {
		return Result{Content: "Edit aborted; the file was not changed.", IsError: true}
	}
	if editorWrites(e.editor) {
		if err := e.editor.WriteTextFile(ctx, abs, string(updated)); err != nil {
			return errorResult(failf("Could not write %s through the editor: %v", path, err))
		}
	} else if err := e.sandbox.Do(func() error { return writeFileAtomic(abs, updated) }); err != nil {
		return Result{Content: describeFileError(path, err), IsError: true}
	}
	return Result{Content: fmt.Sprintf("Successfully replaced %d block(s) in %s.", len(edits), path)}
}

// parseEdits validates the edits argument with the tools.md messages.
func parseEdits(v jsontext.Value) ([]replacement, error) {
	var items []jsontext.Value
	if len(v) == 0 || v.Kind() != '[' || json.Unmarshal(v, &items) != nil || len(items) == 0 {
		return nil, toolError("edits must be a nonempty array")
	}
	out := make([]replacement, len(items))
	for i, item := range items {
		var f struct {
			OldText jsontext.Value `json:"oldText"`
			NewText jsontext.Value `json:"newText"`
		}
		if decodeArgs(item, &f) != nil {
			return nil, failf("edits[%d] must be an object", i)
		}
		oldText, ok := stringValue(f.OldText)
		if !ok {
			return nil, failf("edits[%d].oldText must be a string", i)
		}
		if oldText == "" {
			return nil, failf("edits[%d].oldText must not be empty", i)
		}
		newText, ok := stringValue(f.NewText)
		if !ok {
			return nil, failf("edits[%d].newText must be a string", i)
		}
		out[i] = replacement{oldText, newText}
	}
	return out, nil
}

// readBounded reads a whole file, refusing one larger than limit.
func readBounded(abs string, limit int64) ([]byte, error) {
	f, err := os.Open(abs)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("file is larger than %d MiB", limit>>20)
	}
	return data, nil
}

const bom = "\xEF\xBB\xBF"

// applyEdits applies all edits to original (matched against the original,
// CRLF read as LF) and returns the new file content with the original BOM
// and dominant line ending. path is used in the messages.
func applyEdits(original []byte, path string, edits []replacement) ([]byte, error) {
	text := string(original)
	hasBOM := strings.HasPrefix(text, bom)
	text = strings.TrimPrefix(text, bom)
	crlf := dominantCRLF(text)
	text = strings.ReplaceAll(text, "\r\n", "\n")

	type span struct{ start, end, index int }
	spans := make([]span, len(edits))
	for i, e := range edits {
		old := strings.ReplaceAll(e.oldText, "\r\n", "\n")
		at := strings.Index(text, old)
		if at < 0 {
			return nil, failf("edits[%d].oldText was not found in %s.", i, path)
		}
		if strings.Contains(text[at+1:], old) {
			return nil, failf("edits[%d].oldText occurs more than once in %s; add more context.", i, path)
		}
		spans[i] = span{at, at + len(old), i}
	}
	sorted := slices.Clone(spans)
	slices.SortFunc(sorted, func(a, b span) int { return a.start - b.start })
	for k := 1; k < len(sorted); k++ {
		if prev, cur := sorted[k-1], sorted[k]; cur.start < prev.end {
			i, j := min(prev.index, cur.index), max(prev.index, cur.index)
			return nil, failf("edits[%d] and edits[%d] overlap in %s.", i, j, path)
		}
	}

	var b strings.Builder
	b.Grow(len(text))
	pos := 0
	for _, s := range sorted {
		b.WriteString(text[pos:s.start])
		b.WriteString(strings.ReplaceAll(edits[s.index].newText, "\r\n", "\n"))
		pos = s.end
	}
	b.WriteString(text[pos:])
	out := b.String()
	if crlf {
		out = strings.ReplaceAll(out, "\n", "\r\n")
	}
	if hasBOM {
		out = bom + out
	}
	return []byte(out), nil
}

// dominantCRLF reports whether CRLF line endings outnumber bare LF ones.
func dominantCRLF(text string) bool {
	crlf := strings.Count(text, "\r\n")
	return crlf > strings.Count(text, "\n")-crlf
}
