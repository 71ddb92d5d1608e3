package tools

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
)

func numberedLines(from, to int) string {
	var b strings.Builder
	for i := from; i <= to; i++ {
		if i > from {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "line %d", i)
	}
	return b.String()
}

func TestReadSmallFile(t *testing.T) {
	tools, dir := testTools(t)
	writeFile(t, filepath.Join(dir, "a.txt"), "one\ntwo\n")
	wantResult(t, call(t, tools["read"], map[string]any{"path": "a.txt"}), "one\ntwo", false)
	// Absolute paths work too.
	wantResult(t, call(t, tools["read"], map[string]any{"path": filepath.Join(dir, "a.txt")}), "one\ntwo", false)
}

func TestReadPagingByLines(t *testing.T) {
	tools, dir := testTools(t)
	writeFile(t, filepath.Join(dir, "big.txt"), numberedLines(1, 2500)+"\n")
	got := call(t, tools["read"], map[string]any{"path": "big.txt"})
	wantResult(t, got, numberedLines(1, 2000)+"\n\n[Showing lines 1-2000 of 2500. Use offset=2001 to continue.]", false)
	got = call(t, tools["read"], map[string]any{"path": "big.txt", "offset": 2001})
	wantResult(t, got, numberedLines(2001, 2500), false)
	got = call(t, tools["read"], map[string]any{"path": "big.txt", "offset": 10, "limit": 3})
	wantResult(t, got, numberedLines(10, 12)+"\n\n[Showing lines 10-12 of 2500. Use offset=13 to continue.]", false)
	// A limit above 2,000 is still capped.
	got = call(t, tools["read"], map[string]any{"path": "big.txt", "limit": 5000})
	if !strings.HasSuffix(got.Content, "[Showing lines 1-2000 of 2500. Use offset=2001 to continue.]") {
		t.Fatalf("limit not capped: %q", got.Content[len(got.Content)-80:])
	}
}

func TestReadPagingByBytes(t *testing.T) {
	tools, dir := testTools(t)
	line := strings.Repeat("x", 999) // 1,000 bytes with its newline
	writeFile(t, filepath.Join(dir, "wide.txt"), strings.Repeat(line+"\n", 100))
	got := call(t, tools["read"], map[string]any{"path": "wide.txt"})
	// 51 lines take 51*999+50 = 51,000 bytes; a 52nd would pass 51,200.
	want := strings.Repeat(line+"\n", 50) + line + "\n\n[Showing lines 1-51 of 100. Use offset=52 to continue.]"
	wantResult(t, got, want, false)
}

func TestReadCRLFShownAsLF(t *testing.T) {
	tools, dir := testTools(t)
	writeFile(t, filepath.Join(dir, "crlf.txt"), "\xEF\xBB\xBFa\r\nb\r\nc\rd\r\n")
	wantResult(t, call(t, tools["read"], map[string]any{"path": "crlf.txt"}), "a\nb\nc\rd", false)
	got := call(t, tools["read"], map[string]any{"path": "crlf.txt", "limit": 1})
	wantResult(t, got, "a\n\n[Showing lines 1-1 of 3. Use offset=2 to continue.]", false)
}

func TestReadOffsetBeyondEnd(t *testing.T) {
	tools, dir := testTools(t)
	writeFile(t, filepath.Join(dir, "a.txt"), "1\n2\n3")
	wantResult(t, call(t, tools["read"], map[string]any{"path": "a.txt", "offset": 4}),
		"Offset 4 is beyond end of file (3 lines total).", true)
	wantResult(t, call(t, tools["read"], map[string]any{"path": "a.txt", "offset": 3}), "3", false)
}

func TestReadLongLine(t *testing.T) {
	tools, dir := testTools(t)
	writeFile(t, filepath.Join(dir, "long.txt"), "short\n"+strings.Repeat("y", 60_000)+"\nafter\n")
	got := call(t, tools["read"], map[string]any{"path": "long.txt"})
	wantResult(t, got, "short\n\n[Showing lines 1-1 of 3. Use offset=2 to continue.]", false)
	got = call(t, tools["read"], map[string]any{"path": "long.txt", "offset": 2})
	wantResult(t, got, "Line 2 exceeds 50KB. Use bash with a byte-oriented command to inspect this line.", false)
	// Exactly 50KB is not too long.
	writeFile(t, filepath.Join(dir, "edge.txt"), strings.Repeat("z", MaxOutputBytes)+"\r\n")
	wantResult(t, call(t, tools["read"], map[string]any{"path": "edge.txt"}), strings.Repeat("z", MaxOutputBytes), false)
}

func TestReadBinaryRefused(t *testing.T) {
	tools, dir := testTools(t)
	writeFile(t, filepath.Join(dir, "bin"), "ELF\x00\x01\x02")
	got := call(t, tools["read"], map[string]any{"path": "bin"})
	if !got.IsError || !strings.Contains(got.Content, "binary") {
		t.Fatalf("got %+v", got)
	}
	// A NUL past the sniffed head is found as well.
	writeFile(t, filepath.Join(dir, "late"), strings.Repeat("text\n", 5000)+"\x00")
	if got := call(t, tools["read"], map[string]any{"path": "late"}); !got.IsError || !strings.Contains(got.Content, "binary") {
		t.Fatalf("late NUL: got %q", got.Content)
	}
}

func TestReadErrors(t *testing.T) {
	tools, dir := testTools(t)
	wantResult(t, call(t, tools["read"], map[string]any{"path": "missing.txt"}), "File not found: missing.txt", true)
	if got := call(t, tools["read"], map[string]any{"path": "."}); !got.IsError || !strings.Contains(got.Content, "directory") {
		t.Fatalf("directory: %+v", got)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	wantResult(t, call(t, tools["read"], map[string]any{"path": "fifo"}), "fifo is not a regular file. Use bash to inspect it.", true)
	writeFile(t, filepath.Join(dir, "empty"), "")
	wantResult(t, call(t, tools["read"], map[string]any{"path": "empty"}), "(empty file)", false)
	wantResult(t, call(t, tools["read"], map[string]any{"path": "empty", "offset": 2}),
		"Offset 2 is beyond end of file (0 lines total).", true)
	// Invalid UTF-8 is shown with replacement characters, never passed on.
	writeFile(t, filepath.Join(dir, "latin1"), "caf\xe9\n")
	wantResult(t, call(t, tools["read"], map[string]any{"path": "latin1"}), "caf\uFFFD", false)
}

func TestReadValidation(t *testing.T) {
	tools, _ := testTools(t)
	read := tools["read"]
	for _, tc := range []struct{ args, want string }{
		{`{}`, "path must be a nonempty string"},
		{`{"path":""}`, "path must be a nonempty string"},
		{`{"path":7}`, "path must be a nonempty string"},
		{`{"path":"a","offset":0}`, "offset must be an integer >= 1"},
		{`{"path":"a","offset":1.5}`, "offset must be an integer >= 1"},
		{`{"path":"a","offset":"2"}`, "offset must be an integer >= 1"},
		{`{"path":"a","limit":-1}`, "limit must be an integer >= 1"},
		{`[1]`, "Tool arguments must be a JSON object."},
	} {
		wantResult(t, callRaw(t, read, tc.args), tc.want, true)
	}
	// Integral floats and null are accepted.
	if got := callRaw(t, read, `{"path":"a","offset":2.0,"limit":null}`); got.Content != "File not found: a" {
		t.Fatalf("got %+v", got)
	}
}

func TestReadBoundedMemory(t *testing.T) {
	tools, dir := testTools(t)
	path := filepath.Join(dir, "huge.txt")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	// 64-byte lines in 256 chunks of 64 KiB: a 16 MiB file.
	chunk := []byte(strings.Repeat("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde\n", 1024))
	for range 256 {
		f.Write(chunk)
	}
	f.Close()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	got := call(t, tools["read"], map[string]any{"path": "huge.txt", "offset": 200_000, "limit": 2})
	runtime.ReadMemStats(&after)
	if !strings.HasSuffix(got.Content, "[Showing lines 200000-200001 of 262144. Use offset=200002 to continue.]") {
		t.Fatalf("got %q", got.Content)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 4<<20 {
		t.Fatalf("reading a 16 MiB file allocated %d bytes", alloc)
	}
}
