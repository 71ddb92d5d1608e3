package tools

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/go-json-experiment/json/jsontext"
)

// readTool is the built-in read. It streams the file through a bufio.Reader
// so that only the lines it returns are held in memory, however large the
// file is; the rest is only counted.
type readTool struct {
	workDir string
	editor  Editor // nil: the local file system
}

func (readTool) Definition() Definition {
	return Definition{
		Name: "read",
		Description: "Read a UTF-8 text file. Returns at most 2000 lines and at most 50KB per call; " +
			"when more lines remain, the result ends with a notice giving the offset to continue from. " +
			"Use offset and limit to page through large files. Line endings are shown as LF. " +
			"Binary files are refused. Relative paths resolve against the working directory.",
		Parameters: jsontext.Value(`{"type":"object","properties":{` +
			`"path":{"type":"string","description":"Path of the file to read (relative to the working directory, or absolute)."},` +
			`"offset":{"type":"integer","minimum":1,"description":"Line number to start from, 1-based. Default 1."},` +
			`"limit":{"type":"integer","minimum":1,"description":"Maximum number of lines to return (at most 2000)."}` +
			`},"required":["path"]}`),
	}
}

func (readTool) Replay() Replay { return Replay{Policy: ReplaySafe, Key: "builtin:read:v1"} }

func (r readTool) Run(ctx context.Context, args jsontext.Value) Result {
	var a struct {
		Path   jsontext.Value `json:"path"`
		Offset jsontext.Value `json:"offset"`
		Limit  jsontext.Value `json:"limit"`
	}
	if err := decodeArgs(args, &a); err != nil {
		return errorResult(err)
	}
	path, err := nonEmptyString("path", a.Path)
	if err != nil {
		return errorResult(err)
	}
	offset, err := optionalCount("offset", a.Offset, 1)
	if err != nil {
		return errorResult(err)
	}
	limit, err := optionalCount("limit", a.Limit, MaxOutputLines)
	if err != nil {
		return errorResult(err)
	}
	var content string
	if editorReads(r.editor) {
		content, err = readEditorPage(ctx, r.editor, resolvePath(r.workDir, path), path, offset, min(limit, MaxOutputLines))
	} else {
		content, err = readPage(ctx, resolvePath(r.workDir, path), path, offset, min(limit, MaxOutputLines))
	}
	if err != nil {
		return errorResult(err)
	}
	return Result{Content: content}
}

// sniffSize is how much of a file is checked for NUL bytes before anything
// else is read, so most binary files are refused without a full scan.
const sniffSize = 8192

// readPage returns lines [offset, offset+limit) of the file at abs, within
// MaxOutputBytes, plus the continuation notice when lines remain. display is
// the path as the model wrote it.
func readPage(ctx context.Context, abs, display string, offset, limit int) (string, error) {
	// Stat before opening: opening a FIFO would block, and a device may
	// never end.
	switch fi, err := os.Stat(abs); {
	case err != nil:
		return "", toolError(describeFileError(display, err))
	case fi.IsDir():
		return "", failf("%s is a directory, not a file. Use bash with ls to list it.", display)
	case !fi.Mode().IsRegular():
		return "", failf("%s is not a regular file. Use bash to inspect it.", display)
	}
	f, err := os.Open(abs)
	if err != nil {
		return "", toolError(describeFileError(display, err))
	}
	defer f.Close()
	return readPageFrom(ctx, bufio.NewReaderSize(f, 64<<10), display, offset, limit)
}

// readPageFrom is readPage over the content br reads.
func readPageFrom(ctx context.Context, br *bufio.Reader, display string, offset, limit int) (string, error) {
	binary := failf("%s is a binary file (it contains NUL bytes); read only shows text. Use bash to inspect it.", display)
	if head, _ := br.Peek(sniffSize); bytes.IndexByte(head, 0) >= 0 {
		return "", binary
	}
	if head, _ := br.Peek(3); bytes.Equal(head, []byte("\xEF\xBB\xBF")) {
		br.Discard(3) // the BOM is not content
	}

	var (
		out      []byte
		lr       = lineReader{r: br, max: MaxOutputBytes}
		n        int // lines seen so far
		last     int // number of the last line in out
		stopped  bool
		longLine bool
	)
	for {
		if n%1024 == 0 && ctx.Err() != nil {
			return "", toolError("Read aborted.")
		}
		collect := !stopped && n+1 >= offset
		line, ok, err := lr.next(collect)
		if err != nil {
			return "", toolError(describeFileError(display, err))
		}
		if !ok {
			break
		}
		n++
		if lr.sawNUL {
			return "", binary
		}
		if !collect {
			continue
		}
		switch {
		case lr.long:
			if last == 0 {
				longLine = true
			}
			stopped = true
		case n-offset >= limit:
			stopped = true
		default:
			line = bytes.ToValidUTF8(line, []byte("\uFFFD"))
			sep := 0
			if last > 0 {
				sep = 1
			}
			if len(out)+sep+len(line) > MaxOutputBytes {
				stopped = true
				break
			}
			if sep == 1 {
				out = append(out, '\n')
			}
			out = append(out, line...)
			last = n
		}
		if longLine {
			// Nothing else matters; the model must use another tool.
			return fmt.Sprintf("Line %d exceeds 50KB. Use bash with a byte-oriented command to inspect this line.", n), nil
		}
	}
	if n == 0 && offset == 1 {
		return "(empty file)", nil
	}
	if offset > n {
		return "", failf("Offset %d is beyond end of file (%d lines total).", offset, n)
	}
	if last < n {
		out = fmt.Appendf(out, "\n\n[Showing lines %d-%d of %d. Use offset=%d to continue.]", offset, last, n, last+1)
	}
	return string(out), nil
}

// lineReader yields the lines of a stream one at a time in bounded memory.
type lineReader struct {
	r   *bufio.Reader
	max int    // lines longer than this are reported as long, not kept
	buf []byte // the current line, reused
	// Facts about the line just returned.
	long   bool
	sawNUL bool
}

// next reads one line. With keep it returns the line without its "\n" or
// "\r\n"; otherwise it only consumes it. ok is false at end of input.
func (l *lineReader) next(keep bool) (line []byte, ok bool, err error) {
	l.buf, l.long, l.sawNUL = l.buf[:0], false, false
	size := 0
	for {
		chunk, err := l.r.ReadSlice('\n')
		size += len(chunk)
		if bytes.IndexByte(chunk, 0) >= 0 {
			l.sawNUL = true
		}
		if keep && !l.long {
			// One byte of slack for the '\r' of a CRLF that is stripped below.
			if len(l.buf)+len(chunk) > l.max+2 {
				l.long = true
			} else {
				l.buf = append(l.buf, chunk...)
			}
		}
		switch {
		case err == nil:
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if size == 0 {
				return nil, false, nil
			}
		default:
			return nil, false, err
		}
		break
	}
	line = l.buf
	if n := len(line); n > 0 && line[n-1] == '\n' {
		line = bytes.TrimSuffix(line[:n-1], []byte("\r")) // CRLF is shown as LF
	}
	if len(line) > l.max {
		l.long = true
	}
	if l.long {
		line = nil
	}
	return line, true, nil
}
