package hooks

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/agent"
)

// BenchmarkLoadNoHooks is what every start pays when no hook is
// configured: looking for the three settings files.
func BenchmarkLoadNoHooks(b *testing.B) {
	dir := b.TempDir()
	home := b.TempDir()
	for b.Loop() {
		project := ProjectDir(dir, home)
		Load(SettingsFiles(home, project), nil)
	}
}

// BenchmarkPreToolUseHook is the cost one PreToolUse hook adds to a
// call: its input, sh -c true, and the synced decision record.
func BenchmarkPreToolUseHook(b *testing.B) { benchPreToolUse(b, false) }

// BenchmarkPreToolUseHookContained is the same hook started through the
// sandbox, as tiny-go starts hooks: namespaces, its own /proc, Landlock.
func BenchmarkPreToolUseHookContained(b *testing.B) { benchPreToolUse(b, true) }

func benchPreToolUse(b *testing.B, contained bool) {
	dir := b.TempDir()
	session := filepath.Join(dir, ".tiny-agent", "sessions", "s.jsonl")
	if err := os.MkdirAll(filepath.Dir(session), 0o700); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(session, nil, 0o600); err != nil {
		b.Fatal(err)
	}
	cfg := Load(nil, []Table{{Source: "b", JSON: []byte(`{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"true"}]}]}`)}})
	opt := Options{Config: cfg, Cwd: dir, ProjectDir: dir, Env: os.Environ()}
	if contained {
		opt.Start = containedSandbox(b, dir).Start
	}
	r := New(opt)
	if err := r.Attach("id", session); err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	i := 0
	for b.Loop() {
		i++
		call := agent.HookCall{Key: "a/" + strconv.Itoa(i), ToolCallID: "c", Tool: "bash", Arguments: []byte(`{"command":"ls"}`)}
		if _, err := r.BeforeTool(context.Background(), call); err != nil {
			b.Fatal(err)
		}
	}
}
