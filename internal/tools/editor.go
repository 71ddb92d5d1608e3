package tools

import (
	"bufio"
	"context"
	"strings"
)

// Editor is a host that owns the files the file tools touch: an editor
// connected over ACP, whose unsaved buffers read shows and whose
// write and edit go through it (fs/read_text_file, fs/write_text_file).
// CanRead and CanWrite say which of the two the host offers; for the
// other the tools use the local file system. Paths are absolute. The
// sandbox's write rules apply either way.
type Editor interface {
	CanRead() bool
	CanWrite() bool
	ReadTextFile(ctx context.Context, abs string) (string, error)
	WriteTextFile(ctx context.Context, abs, content string) error
}

func editorReads(e Editor) bool  { return e != nil && e.CanRead() }
func editorWrites(e Editor) bool { return e != nil && e.CanWrite() }

// readEditorPage is readPage over the editor's text of the file.
func readEditorPage(ctx context.Context, e Editor, abs, display string, offset, limit int) (string, error) {
	text, err := e.ReadTextFile(ctx, abs)
	if err != nil {
		return "", failf("Could not read %s through the editor: %v", display, err)
	}
	return readPageFrom(ctx, bufio.NewReaderSize(strings.NewReader(text), 64<<10), display, offset, limit)
}
