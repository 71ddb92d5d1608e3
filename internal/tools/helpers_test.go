package tools

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// testTools builds every built-in for a fresh temporary working directory.
func testTools(t testing.TB) (map[string]Tool, string) {
	t.Helper()
	dir := t.TempDir()
	m, err := NewManager(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.StopAll(context.Background()) })
	list, err := Builtins(Config{WorkDir: dir, Background: m})
	if err != nil {
		t.Fatal(err)
	}
	byName := make(map[string]Tool)
	for _, tool := range list {
		byName[tool.Definition().Name] = tool
	}
	return byName, dir
}

// call runs tool with args given as a Go value marshalled to JSON.
func call(t testing.TB, tool Tool, args any) Result {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	return tool.Run(context.Background(), jsontext.Value(raw))
}

// callRaw runs tool with literal JSON arguments.
func callRaw(t testing.TB, tool Tool, args string) Result {
	t.Helper()
	return tool.Run(context.Background(), jsontext.Value(args))
}

func writeFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t testing.TB, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func wantResult(t testing.TB, got Result, content string, isError bool) {
	t.Helper()
	if got.Content != content || got.IsError != isError {
		t.Fatalf("got %+v\nwant content %q isError=%v", got, content, isError)
	}
}
