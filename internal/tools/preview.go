package tools

import (
	"errors"
	"io/fs"

	"github.com/go-json-experiment/json/jsontext"
)

// FileChange is what a write or edit call would do to one file, computed
// without touching it, so the user can see a diff before approving.
type FileChange struct {
	Path   string // as the model gave it
	Exists bool   // the file exists now
	Old    string // its content now ("" when it does not exist)
	New    string // its content after the call
}

// PreviewChange computes the change a call of the built-in write or edit
// would make with args. An error is the model-facing message the call
// itself would fail with.
func PreviewChange(workDir, tool string, args jsontext.Value) (FileChange, error) {
	var a struct {
		Path    jsontext.Value `json:"path"`
		Content jsontext.Value `json:"content"`
		Edits   jsontext.Value `json:"edits"`
	}
	if err := decodeArgs(args, &a); err != nil {
		return FileChange{}, err
	}
	path, err := nonEmptyString("path", a.Path)
	if err != nil {
		return FileChange{}, err
	}
	c := FileChange{Path: path}
	old, err := readBounded(resolvePath(workDir, path), maxEditSize)
	switch {
	case err == nil:
		c.Exists, c.Old = true, string(old)
	case errors.Is(err, fs.ErrNotExist) && tool == "write":
	default:
		return c, toolError(describeFileError(path, err))
	}
	switch tool {
	case "write":
		if c.New, err = anyString("content", a.Content); err != nil {
			return c, err
		}
	case "edit":
		edits, err := parseEdits(a.Edits)
		if err != nil {
			return c, err
		}
		updated, err := applyEdits(old, path, edits)
		if err != nil {
			return c, err
		}
		c.New = string(updated)
	default:
		return c, failf("%s does not change files", tool)
	}
	return c, nil
}
