package agents

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tiny-agent/tiny-go/internal/tools"
)

func TestParseClaudeCodeAgentFile(t *testing.T) {
	d, err := Parse([]byte("---\nname: code-reviewer\ndescription: Reviews code\n  for bugs.\ntools: Read, Grep, Glob, Bash\nmodel: sonnet\n---\n\nYou review code.\n"))
	if err != nil {
		t.Fatal(err)
	}
	if d.Name != "code-reviewer" || d.Description != "Reviews code for bugs." || d.Prompt != "You review code." || d.Model != "" {
		t.Fatalf("%+v", d)
	}
	if !slices.Equal(d.Tools, []string{"read", "bash"}) || d.ReadOnlyBash {
		t.Fatalf("tools %v read-only %v", d.Tools, d.ReadOnlyBash)
	}
	// Grep without Bash: bash with the tree read-only; a list works too.
	d, err = Parse([]byte("---\nname: finder\ndescription: Finds\ntools: [Read, Grep]\nmodel: anthropic/claude-haiku-4.5\n---\nFind.\n"))
	if err != nil || !slices.Equal(d.Tools, []string{"read", "bash"}) || !d.ReadOnlyBash || d.Model != "anthropic/claude-haiku-4.5" {
		t.Fatalf("%+v %v", d, err)
	}
	// No tools: every tool but task.
	d, err = Parse([]byte("---\nname: all\ndescription: x\n---\nbody\n"))
	if err != nil || d.Tools != nil || !d.Offers("write") || d.Offers("task") {
		t.Fatalf("%+v %v", d, err)
	}
	for _, bad := range []string{
		"no front matter", "---\nname: x\n", "---\nname: x\ndescription: y\n---\n",
		"---\nname: bad name\ndescription: y\n---\nbody", "---\nname: x\n---\nbody",
		"---\nname: x\ndescription: y\ntools: {a: 1}\n---\nbody", "---\n: [\n---\nbody",
	} {
		if _, err := Parse([]byte(bad)); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
}

func TestLoadPrecedence(t *testing.T) {
	home, proj := t.TempDir(), t.TempDir()
	write := func(dir, name, text string) {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dirs := Dirs(proj, home)
	write(dirs[0], "r.md", "---\nname: r\ndescription: from home\n---\nx")
	write(dirs[1], "r.md", "---\nname: r\ndescription: from .claude\n---\nx")
	write(dirs[2], "e.md", "---\nname: explore\ndescription: mine\n---\nx")
	write(dirs[2], "broken.md", "---\nname: broken\n")
	defs, problems := Load(dirs...)
	if len(problems) != 1 || !strings.Contains(problems[0], "broken.md") {
		t.Fatalf("problems %q", problems)
	}
	r, _ := Find(defs, "r")
	e, _ := Find(defs, "explore")
	g, ok := Find(defs, "general")
	if r.Description != "from .claude" || e.Description != "mine" || !ok || g.Path != "" {
		t.Fatalf("%+v %+v %+v", r, e, g)
	}
}

func TestTaskToolPassesTheCall(t *testing.T) {
	defs, _ := Load()
	var got Call
	tool := NewTool(defs, func(_ context.Context, c Call) tools.Result {
		got = c
		return tools.Result{Content: "report"}
	})
	ctx := tools.WithStartedID(context.Background(), "ts-1")
	res := tool.Run(ctx, jsontext.Value(`{"description":"look  around","prompt":"find x","subagent_type":"explore"}`))
	if res.Content != "report" || got.StartedID != "ts-1" || got.Agent.Name != "explore" || got.Description != "look around" || !got.Agent.ReadOnlyBash {
		t.Fatalf("%+v %+v", res, got)
	}
	for _, bad := range []string{`{"prompt":"x","subagent_type":"nope"}`, `{"prompt":"","subagent_type":"general"}`, `{"prompt":"x"}`, `[]`} {
		if r := tool.Run(ctx, jsontext.Value(bad)); !r.IsError {
			t.Errorf("%s: %+v", bad, r)
		}
	}
	if d := tool.Definition().Description; !strings.Contains(d, "- explore: ") || !strings.Contains(d, "- general: ") {
		t.Fatalf("description:\n%s", d)
	}
	if !jsontext.Value(tool.Definition().Parameters).IsValid() {
		t.Fatal("parameters are not JSON")
	}
}

func TestLinks(t *testing.T) {
	dir := t.TempDir()
	sessions := filepath.Join(dir, ".tiny-agent", "sessions")
	if err := os.MkdirAll(sessions, 0o700); err != nil {
		t.Fatal(err)
	}
	parent := filepath.Join(sessions, "p.jsonl")
	l := Link{Parent: "p", ToolStartedID: "ts", Child: "c", Agent: "explore"}
	if err := RecordChild(parent, l); err != nil {
		t.Fatal(err)
	}
	got, ok, err := ChildOf(parent, "ts")
	if err != nil || !ok || got != l {
		t.Fatalf("%+v %v %v", got, ok, err)
	}
	child := filepath.Join(sessions, "c.jsonl")
	if err := WriteParent(child, l); err != nil {
		t.Fatal(err)
	}
	if got, ok := ParentOf(child); !ok || got != l {
		t.Fatalf("%+v %v", got, ok)
	}
	if _, ok := ParentOf(parent); ok {
		t.Fatal("the parent has a parent")
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("---\nname: a\ndescription: b\ntools: Read, Bash\nmodel: inherit\n---\nbody\n"))
	f.Add([]byte("---\nname: a\ndescription: b\ntools:\n  - Read\n  - Grep\n---\nbody"))
	f.Add([]byte("---\r\nname: a\r\n---\r\n"))
	f.Add([]byte("---\n---\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := Parse(data)
		if err != nil {
			return
		}
		if !validName(d.Name) || d.Description == "" || d.Prompt == "" {
			t.Fatalf("accepted an incomplete agent: %+v", d)
		}
		if d.ReadOnlyBash && !slices.Contains(d.Tools, "bash") {
			t.Fatalf("read-only bash without bash: %+v", d)
		}
	})
}

// What Claude Code accepts loads with its meaning: an unquoted ": " in a
// description (8 files of the public collections), a dot in the name
// (powershell-5.1-expert), tools: [] for no tools.
func TestClaudeCodeLeniency(t *testing.T) {
	d, err := Parse([]byte("---\nname: powershell-5.1-expert\ndescription: Use this agent when: the user asks for PowerShell. Examples: <example>Context: x</example>\ntools: Read, Bash\nmodel: sonnet\n---\nYou are an expert.\n"))
	if err != nil {
		t.Fatal(err)
	}
	if d.Name != "powershell-5.1-expert" || d.Description != "Use this agent when: the user asks for PowerShell. Examples: <example>Context: x</example>" {
		t.Errorf("parsed %q: %q", d.Name, d.Description)
	}
	none, err := Parse([]byte("---\nname: talker\ndescription: talks only\ntools: []\n---\nTalk.\n"))
	if err != nil {
		t.Fatal(err)
	}
	if none.Tools == nil || len(none.Tools) != 0 || none.Offers("read") {
		t.Errorf("tools: [] gives %v", none.Tools)
	}
}
