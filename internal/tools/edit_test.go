package tools

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

func TestWriteCreatesParentsAndReportsBytes(t *testing.T) {
	tools, dir := testTools(t)
	got := call(t, tools["write"], map[string]any{"path": "a/b/c.txt", "content": "héllo\n"})
	wantResult(t, got, "Successfully wrote 7 bytes to a/b/c.txt.", false)
	if s := readFile(t, filepath.Join(dir, "a/b/c.txt")); s != "héllo\n" {
		t.Fatalf("content %q", s)
	}
	fi, _ := os.Stat(filepath.Join(dir, "a/b/c.txt"))
	if fi.Mode().Perm() != 0o644 {
		t.Fatalf("new file mode %v", fi.Mode())
	}
	wantResult(t, call(t, tools["write"], map[string]any{"path": "empty", "content": ""}), "Successfully wrote 0 bytes to empty.", false)
}

func TestWriteKeepsModeAndLeavesNoTemp(t *testing.T) {
	tools, dir := testTools(t)
	path := filepath.Join(dir, "run.sh")
	writeFile(t, path, "old")
	if err := os.Chmod(path, 0o751); err != nil {
		t.Fatal(err)
	}
	wantResult(t, call(t, tools["write"], map[string]any{"path": "run.sh", "content": "new"}), "Successfully wrote 3 bytes to run.sh.", false)
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o751 {
		t.Fatalf("mode %v err %v", fi.Mode(), err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("leftover files: %v", entries)
	}
}

func TestWriteThroughSymlink(t *testing.T) {
	tools, dir := testTools(t)
	writeFile(t, filepath.Join(dir, "real.txt"), "old")
	if err := os.Symlink("real.txt", filepath.Join(dir, "link.txt")); err != nil {
		t.Fatal(err)
	}
	call(t, tools["write"], map[string]any{"path": "link.txt", "content": "new"})
	if fi, _ := os.Lstat(filepath.Join(dir, "link.txt")); fi.Mode()&os.ModeSymlink == 0 {
		t.Fatal("symlink was replaced")
	}
	if s := readFile(t, filepath.Join(dir, "real.txt")); s != "new" {
		t.Fatalf("target %q", s)
	}
}

func TestWriteValidation(t *testing.T) {
	tools, _ := testTools(t)
	wantResult(t, callRaw(t, tools["write"], `{"content":"x"}`), "path must be a nonempty string", true)
	wantResult(t, callRaw(t, tools["write"], `{"path":"x"}`), "content must be a string", true)
	wantResult(t, callRaw(t, tools["write"], `{"path":"x","content":3}`), "content must be a string", true)
}

type edit struct {
	OldText string `json:"oldText"`
	NewText string `json:"newText"`
}

func runEdit(t testing.TB, tool Tool, path string, edits ...edit) Result {
	t.Helper()
	return call(t, tool, map[string]any{"path": path, "edits": edits})
}

func TestEditReplacesAgainstOriginal(t *testing.T) {
	tools, dir := testTools(t)
	path := filepath.Join(dir, "f.go")
	writeFile(t, path, "alpha\nbeta\ngamma\n")
	// The second edit matches the original "beta", not text the first made.
	got := runEdit(t, tools["edit"], "f.go", edit{"alpha", "beta!"}, edit{"beta\n", "BETA\n"})
	wantResult(t, got, "Successfully replaced 2 block(s) in f.go.", false)
	if s := readFile(t, path); s != "beta!\nBETA\ngamma\n" {
		t.Fatalf("content %q", s)
	}
}

func TestEditErrors(t *testing.T) {
	tools, dir := testTools(t)
	path := filepath.Join(dir, "f.txt")
	const orig = "one two one\nthree\n"
	writeFile(t, path, orig)
	for _, tc := range []struct {
		edits []edit
		want  string
	}{
		{[]edit{{"four", "4"}}, "edits[0].oldText was not found in f.txt."},
		{[]edit{{"three", "3"}, {"one", "1"}}, "edits[1].oldText occurs more than once in f.txt; add more context."},
		{[]edit{{"two one", "x"}, {"three", "3"}, {"one two", "y"}}, "edits[0] and edits[2] overlap in f.txt."},
		{[]edit{{"three", "3"}, {"three", "3"}}, "edits[0] and edits[1] overlap in f.txt."},
	} {
		wantResult(t, runEdit(t, tools["edit"], "f.txt", tc.edits...), tc.want, true)
	}
	// Overlapping occurrences count as more than once.
	writeFile(t, filepath.Join(dir, "aaa"), "aaa")
	wantResult(t, runEdit(t, tools["edit"], "aaa", edit{"aa", "b"}), "edits[0].oldText occurs more than once in aaa; add more context.", true)
	if s := readFile(t, path); s != orig {
		t.Fatalf("failed edit changed the file: %q", s)
	}
	// Touching edits do not overlap.
	wantResult(t, runEdit(t, tools["edit"], "f.txt", edit{"one two ", "A"}, edit{"one\n", "B\n"}), "Successfully replaced 2 block(s) in f.txt.", false)
	wantResult(t, runEdit(t, tools["edit"], "nope.txt", edit{"a", "b"}), "File not found: nope.txt", true)
}

func TestEditValidation(t *testing.T) {
	tools, _ := testTools(t)
	for _, tc := range []struct{ args, want string }{
		{`{"edits":[]}`, "path must be a nonempty string"},
		{`{"path":"f"}`, "edits must be a nonempty array"},
		{`{"path":"f","edits":[]}`, "edits must be a nonempty array"},
		{`{"path":"f","edits":{"oldText":"a","newText":"b"}}`, "edits must be a nonempty array"},
		{`{"path":"f","edits":[{"oldText":"a","newText":"b"},"x"]}`, "edits[1] must be an object"},
		{`{"path":"f","edits":[{"newText":"b"}]}`, "edits[0].oldText must be a string"},
		{`{"path":"f","edits":[{"oldText":"","newText":"b"}]}`, "edits[0].oldText must not be empty"},
		{`{"path":"f","edits":[{"oldText":"a","newText":null}]}`, "edits[0].newText must be a string"},
	} {
		wantResult(t, callRaw(t, tools["edit"], tc.args), tc.want, true)
	}
}

func TestEditKeepsBOMAndCRLF(t *testing.T) {
	tools, dir := testTools(t)
	path := filepath.Join(dir, "win.txt")
	// CRLF dominates (3 to 1); the LF-only line is converted too.
	writeFile(t, path, "\xEF\xBB\xBFa\r\nb\r\nc\nd\r\n")
	// The model writes LF; it matches the CRLF in the file.
	got := runEdit(t, tools["edit"], "win.txt", edit{"a\nb", "x\ny"})
	wantResult(t, got, "Successfully replaced 1 block(s) in win.txt.", false)
	if s := readFile(t, path); s != "\xEF\xBB\xBFx\r\ny\r\nc\r\nd\r\n" {
		t.Fatalf("content %q", s)
	}
	// A CRLF oldText matches an LF file, which stays LF.
	path = filepath.Join(dir, "unix.txt")
	writeFile(t, path, "a\nb\nc\r\n")
	runEdit(t, tools["edit"], "unix.txt", edit{"b\r\nc", "B\r\nC"})
	if s := readFile(t, path); s != "a\nB\nC\n" {
		t.Fatalf("content %q", s)
	}
}

func TestEditKeepsMode(t *testing.T) {
	tools, dir := testTools(t)
	path := filepath.Join(dir, "x.sh")
	writeFile(t, path, "echo hi\n")
	os.Chmod(path, 0o700)
	runEdit(t, tools["edit"], "x.sh", edit{"hi", "ho"})
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o700 {
		t.Fatalf("mode %v", fi.Mode())
	}
}

// FuzzEdit checks that edit never panics and that a successful edit leaves
// a file that contains every newText, keeps the BOM and the dominant line
// ending, and has the expected length.
func FuzzEdit(f *testing.F) {
	f.Add([]byte("hello world\n"), "world", "there", "", "")
	f.Add([]byte("\xEF\xBB\xBFa\r\nb\r\nc\n"), "a\nb", "1\r\n2", "c", "C")
	f.Add([]byte("aaa"), "aa", "b", "a", "c")
	f.Add([]byte("x\ry\r\n"), "\r", "\n", "y", "")
	f.Add([]byte("one two three"), "one", "", "three", "3")
	dir := f.TempDir()
	tool := editTool{workDir: dir}
	path := filepath.Join(dir, "f")
	f.Fuzz(func(t *testing.T, content []byte, old1, new1, old2, new2 string) {
		edits := []edit{{old1, new1}}
		if old2 != "" || new2 != "" {
			edits = append(edits, edit{old2, new2})
		}
		raw, err := json.Marshal(map[string]any{"path": "f", "edits": edits})
		if err != nil {
			return // invalid UTF-8 in a string: the host never passes that
		}
		if err := os.WriteFile(path, content, 0o644); err != nil {
			t.Fatal(err)
		}
		res := tool.Run(context.Background(), jsontext.Value(raw))
		after, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if res.IsError {
			if !bytes.Equal(after, content) {
				t.Fatalf("failed edit (%s) changed the file", res.Content)
			}
			return
		}
		hadBOM := bytes.HasPrefix(content, []byte(bom))
		if bytes.HasPrefix(after, []byte(bom)) != hadBOM {
			t.Fatalf("BOM not kept: %q -> %q", content, after)
		}
		// Undo the line-ending conversion: with CRLF dominant every LF
		// got a CR in front, so replacing CRLF by LF restores exactly the
		// LF-normalized result; an LF file is written as is.
		body := strings.TrimPrefix(string(after), bom)
		lf := func(s string) string { return strings.ReplaceAll(s, "\r\n", "\n") }
		result := body
		if dominantCRLF(strings.TrimPrefix(string(content), bom)) {
			if strings.Count(body, "\n") != strings.Count(body, "\r\n") {
				t.Fatalf("CRLF file got a bare LF: %q", after)
			}
			result = lf(body)
		}
		want := len(lf(strings.TrimPrefix(string(content), bom)))
		for _, e := range edits {
			if !strings.Contains(result, lf(e.NewText)) {
				t.Fatalf("newText %q missing from %q", e.NewText, result)
			}
			want += len(lf(e.NewText)) - len(lf(e.OldText))
		}
		if len(result) != want {
			t.Fatalf("length %d, want %d (%q -> %q)", len(result), want, content, after)
		}
	})
}
