package subagents

import (
	"context"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/agents"
	"github.com/tiny-agent/tiny-go/internal/provider"
	"github.com/tiny-agent/tiny-go/internal/store"
	"github.com/tiny-agent/tiny-go/internal/tools"
)

// fakeTool is a tool the children may be offered; it is never run.
type fakeTool string

func (f fakeTool) Definition() tools.Definition {
	return tools.Definition{Name: string(f), Description: "fake", Parameters: jsontext.Value(`{"type":"object"}`)}
}
func (f fakeTool) Replay() tools.Replay {
	return tools.Replay{Policy: tools.ReplayNever, Key: "fake:" + string(f)}
}
func (f fakeTool) Run(context.Context, jsontext.Value) tools.Result {
	return tools.Result{Content: "ran"}
}

// answering answers every request at once and counts them.
type answering struct{ n atomic.Int32 }

func (p *answering) Stream(context.Context, provider.Request, func(provider.Delta)) (provider.Response, error) {
	p.n.Add(1)
	text := "The config is in main.go."
	return provider.Response{Content: &text, FinishReason: provider.FinishStop, Usage: provider.Usage{Input: 100, Output: 7, PromptTokens: 100}}, nil
}

type fixture struct {
	dir    string
	parent *store.Store
	p      *answering
	built  []agent.Config // what Build was given, in order
	lines  []string
	costs  int
}

// newFixture is a parent session in a fresh directory and the children
// of it, built on a provider that answers at once.
func newFixture(t *testing.T, defs []agents.Definition, maxDepth int) (*fixture, *Children) {
	t.Helper()
	f := &fixture{dir: t.TempDir(), p: &answering{}}
	var err error
	f.parent, err = store.Create(f.dir, store.NewHeader{Provider: "test", Model: "parent/model", EnvironmentIdentity: "fixture"}, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.parent.Close() })
	c := New(Config{
		Defs: defs, Cwd: f.dir, Provider: "test", EnvID: "fixture", MaxDepth: maxDepth,
		Model:  func() string { return "parent/model" },
		Parent: func() (string, string) { return f.parent.Path(), f.parent.ID() },
		Line:   func(s string) { f.lines = append(f.lines, s) },
		Cost: func(ev agent.Event) {
			if _, ok := ev.(agent.ModelCompleted); ok {
				f.costs++
			}
		},
		Build: func(cfg agent.Config) (*agent.Agent, error) {
			f.built = append(f.built, cfg)
			cfg.Provider = f.p
			return agent.New(cfg)
		},
	})
	c.Attach([]tools.Tool{fakeTool("read"), fakeTool("bash"), fakeTool("edit"), fakeTool(agents.ToolName)}, nil, nil)
	return f, c
}

func runTask(c *Children, startedID, args string) tools.Result {
	ctx := tools.WithStartedID(context.Background(), startedID)
	return c.Tool().Run(ctx, jsontext.Value(args))
}

func toolNames(ts []tools.Tool) []string {
	var names []string
	for _, t := range ts {
		names = append(names, t.Definition().Name)
	}
	return names
}

// A child runs in a session of its own linked to its parent, on the
// agent Build completes, offered only its definition's tools; a call run
// again (a parent resumed after a crash) reports the child's answer
// without asking the model again.
func TestChildRunsLinkedAndOnce(t *testing.T) {
	defs := []agents.Definition{{Name: "reader", Tools: []string{"read", "bash"}, Prompt: "Read what you are asked about."}}
	f, c := newFixture(t, defs, 1)
	args := `{"description":"find the config","prompt":"Where is the config?","subagent_type":"reader"}`
	res := runTask(c, "started-1", args)
	if res.IsError || res.Content != "The config is in main.go." {
		t.Fatalf("result = %+v, want the child's answer", res)
	}
	if res.Usage == nil || res.Usage.Input != 100 || res.Usage.Output != 7 {
		t.Errorf("usage = %+v, want the child's tokens", res.Usage)
	}
	if f.costs != 1 {
		t.Errorf("cost events = %d, want 1 (the child's request rolls up)", f.costs)
	}
	if len(f.built) != 1 {
		t.Fatalf("Build called %d times, want 1", len(f.built))
	}
	cfg := f.built[0]
	if got := toolNames(cfg.Tools); !slices.Equal(got, []string{"read", "bash"}) {
		t.Errorf("child's tools = %v, want [read bash] (never task at depth 1)", got)
	}
	if cfg.Model != "parent/model" || cfg.Hooks != nil || cfg.Approve != nil {
		t.Errorf("child's config: model %q hooks %v approve nil=%v; want the parent's model, no hooks, no approval", cfg.Model, cfg.Hooks, cfg.Approve == nil)
	}
	for _, want := range []string{"Read what you are asked about.", "Working directory: " + f.dir, "Tools offered to you: read, bash."} {
		if !strings.Contains(cfg.SystemPrompt, want) {
			t.Errorf("system prompt %q lacks %q", cfg.SystemPrompt, want)
		}
	}
	links, err := agents.Children(f.parent.Path())
	if err != nil || len(links) != 1 {
		t.Fatalf("links = %v, %v; want one", links, err)
	}
	l := links[0]
	if l.Agent != "reader" || l.Description != "find the config" || l.ToolStartedID != "started-1" {
		t.Errorf("link = %+v", l)
	}
	childPath, err := store.PathByID(f.dir, l.Child)
	if err != nil || !IsChild(childPath) || IsChild(f.parent.Path()) {
		t.Errorf("IsChild: child %v, parent %v (err %v)", IsChild(childPath), IsChild(f.parent.Path()), err)
	}
	if got, want := ChildLabel(l), "reader subagent of "+ShortID(f.parent.ID())+": find the config"; got != want {
		t.Errorf("ChildLabel = %q, want %q", got, want)
	}

	again := runTask(c, "started-1", args)
	if again.Content != res.Content || f.p.n.Load() != 1 {
		t.Errorf("call run again: %q after %d requests; want the same answer, no new request", again.Content, f.p.n.Load())
	}
	if links, _ := agents.Children(f.parent.Path()); len(links) != 1 {
		t.Errorf("call run again made %d children, want 1", len(links))
	}
}

// An agent may delegate only below the depth limit, and one whose tools
// this session lacks does not start.
func TestChildDepthAndUnknownTools(t *testing.T) {
	defs := []agents.Definition{
		{Name: "general", Prompt: "Do it."},
		{Name: "ghost", Tools: []string{"teleport"}, Path: "/x/ghost.md"},
	}
	f, c := newFixture(t, defs, 2)
	if res := runTask(c, "s1", `{"prompt":"go","subagent_type":"general"}`); res.IsError {
		t.Fatal(res.Content)
	}
	if got := toolNames(f.built[0].Tools); !slices.Equal(got, []string{"read", "bash", "edit", agents.ToolName}) {
		t.Errorf("depth 1 of 2: tools %v, want every tool and a task of its own", got)
	}
	if f.built[0].Tools[3] == tools.Tool(fakeTool(agents.ToolName)) {
		t.Error("the child was offered the parent's task tool, not its own")
	}

	f1, c1 := newFixture(t, defs, 1)
	runTask(c1, "s1", `{"prompt":"go","subagent_type":"general"}`)
	if got := toolNames(f1.built[0].Tools); slices.Contains(got, agents.ToolName) {
		t.Errorf("depth limit 1: tools %v include task", got)
	}

	res := runTask(c, "s2", `{"prompt":"go","subagent_type":"ghost"}`)
	if !res.IsError || !strings.Contains(res.Content, "fix the tools line of /x/ghost.md") {
		t.Errorf("unknown tools: %+v", res)
	}
	if len(f.built) != 1 {
		t.Errorf("an agent with unknown tools was built")
	}
}

func TestMaxDepth(t *testing.T) {
	for v, want := range map[string]int{"": 1, "3": 3, " 2 ": 2, "0": 1, "x": 1} {
		if got := MaxDepth(func(string) string { return v }); got != want {
			t.Errorf("MaxDepth(%q) = %d, want %d", v, got, want)
		}
	}
}
