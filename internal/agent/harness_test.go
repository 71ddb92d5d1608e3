package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/tiny-agent/tiny-go/internal/provider"
	"github.com/tiny-agent/tiny-go/internal/providertest"
	"github.com/tiny-agent/tiny-go/internal/session"
	"github.com/tiny-agent/tiny-go/internal/store"
	"github.com/tiny-agent/tiny-go/internal/tools"
)

// harness is a real session store in a temporary directory, a scripted
// provider on loopback, the real built-in tools and an agent over them.
type harness struct {
	t      testing.TB
	dir    string
	store  *store.Store
	server *providertest.Server
	agent  *Agent
	obs    *recorder
	cfg    Config
}

type harnessOption func(*Config)

func withHooks(h *hooks) harnessOption         { return func(c *Config) { c.hooks = h } }
func withLog(wrap func(Log) Log) harnessOption { return func(c *Config) { c.Log = wrap(c.Log) } }
func withAutoCompact(window int64, share float64) harnessOption {
	return func(c *Config) { c.AutoCompact = &AutoCompact{ContextWindow: window, Share: share} }
}

func newHarness(t testing.TB, replies []providertest.Reply, opts ...harnessOption) *harness {
	t.Helper()
	dir := t.TempDir()
	store, err := store.Create(dir, store.NewHeader{Provider: "openrouter", Model: "test/model", EnvironmentIdentity: "test-env"}, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	h := &harness{t: t, dir: dir, store: store, server: providertest.New(t, replies...)}
	h.cfg = h.config(store)
	for _, o := range opts {
		o(&h.cfg)
	}
	h.agent = h.newAgent(h.cfg)
	return h
}

func (h *harness) config(log Log) Config {
	h.t.Helper()
	p, err := provider.New(provider.Config{Endpoint: h.server.URL(), APIKey: "test-key", IdleTimeout: 5 * time.Second})
	if err != nil {
		h.t.Fatal(err)
	}
	bg, err := tools.NewManager(h.dir)
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { bg.StopAll(context.Background()) })
	ts, err := tools.Builtins(tools.Config{WorkDir: h.dir, Background: bg})
	if err != nil {
		h.t.Fatal(err)
	}
	h.obs = &recorder{}
	return Config{
		Log: log, Provider: p, Tools: ts, Model: "test/model", SystemPrompt: "You are a test.",
		EnvironmentIdentity: "test-env",
		NewID:               func() string { return uuid.Must(uuid.NewV7()).String() },
		Events:              h.obs.record,
	}
}

func (h *harness) newAgent(cfg Config) *Agent {
	h.t.Helper()
	a, err := New(cfg)
	if err != nil {
		h.t.Fatal(err)
	}
	return a
}

// reopen closes the store and opens it again, as a new process would, and
// builds a fresh agent with the same configuration.
func (h *harness) reopen(opts ...harnessOption) {
	h.t.Helper()
	id := h.store.ID()
	if err := h.store.Close(); err != nil {
		h.t.Fatal(err)
	}
	store, err := store.Open(h.dir, id, store.Options{})
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { store.Close() })
	h.store = store
	cfg := h.cfg
	cfg.Log = store
	cfg.hooks = nil
	cfg.Events = h.obs.record
	for _, o := range opts {
		o(&cfg)
	}
	h.agent = h.newAgent(cfg)
}

func (h *harness) run(prompt string) Result {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := h.agent.Run(ctx, prompt)
	if err != nil {
		h.t.Fatalf("Run(%q): %v", prompt, err)
	}
	return res
}

func (h *harness) bytes() []byte {
	h.t.Helper()
	b, err := os.ReadFile(h.store.Path())
	if err != nil {
		h.t.Fatal(err)
	}
	return b
}

// reduce re-reads the session file from disk and reduces it, so every test
// checks what is durable, not what is in memory.
func (h *harness) reduce() *session.State {
	h.t.Helper()
	st, c := session.Reduce(h.bytes())
	if c != nil {
		h.t.Fatalf("session file does not reduce: %v", c)
	}
	return st
}

// factLine is one fact of the file, decoded loosely for assertions.
type factLine struct {
	Kind   string         `json:"kind"`
	Entry  map[string]any `json:"entry"`
	Record map[string]any `json:"record"`
	Seq    int            `json:"seq"`
	ID     string         `json:"id"`
}

// label is a short name of a fact: "user", "assistant:toolUse",
// "tool:success", "synthetic:aborted", "compaction", "usage",
// "runStarted", "operationFinished:aborted", ...
func (f factLine) label() string {
	switch f.Kind {
	case "usage":
		return "usage"
	case "record":
		typ, _ := f.Record["type"].(string)
		switch typ {
		case "operationFinished":
			return typ + ":" + f.Record["outcome"].(string)
		case "stepFailed":
			return typ + ":" + f.Record["error"].(map[string]any)["code"].(string)
		case "abortRequested":
			return typ + ":" + f.Record["phase"].(string)
		case "stepAttempt":
			return typ + ":" + f.Record["stepKind"].(string)
		}
		return typ
	}
	if f.Entry["type"] == "compaction" {
		return "compaction"
	}
	msg := f.Entry["message"].(map[string]any)
	switch msg["role"] {
	case "user":
		return "user"
	case "assistant":
		return "assistant:" + f.Entry["stopReason"].(string)
	}
	res := f.Entry["result"].(map[string]any)
	if res["type"] == "synthetic" {
		return "synthetic:" + res["reason"].(string)
	}
	return "tool:" + res["type"].(string)
}

// facts returns every fact of the file in order (transactions flattened).
func (h *harness) facts() []factLine {
	h.t.Helper()
	var out []factLine
	lines := bytes.Split(bytes.TrimSuffix(h.bytes(), []byte("\n")), []byte("\n"))
	for _, line := range lines[1:] {
		if line[0] == '[' {
			var tx []factLine
			if err := json.Unmarshal(line, &tx); err != nil {
				h.t.Fatal(err)
			}
			out = append(out, tx...)
			continue
		}
		var f factLine
		if err := json.Unmarshal(line, &f); err != nil {
			h.t.Fatal(err)
		}
		out = append(out, f)
	}
	return out
}

func (h *harness) labels() string {
	h.t.Helper()
	var ls []string
	for _, f := range h.facts() {
		ls = append(ls, f.label())
	}
	return strings.Join(ls, " ")
}

func (h *harness) path(name string) string { return filepath.Join(h.dir, name) }

// recorder keeps a log of the events it saw.
type recorder struct {
	mu     sync.Mutex
	events []string
}

func (r *recorder) add(s string) {
	r.mu.Lock()
	r.events = append(r.events, s)
	r.mu.Unlock()
}

func (r *recorder) record(ev Event) {
	switch ev := ev.(type) {
	case OperationStarted:
		r.add("operation.started:" + string(ev.Kind))
	case OperationCompleted:
		r.add("operation.completed:" + string(ev.Result.Kind) + ":" + string(ev.Result.Outcome))
	case ModelStarted:
		r.add("model.started")
	case ModelCompleted:
		r.add("model.completed:" + ev.Outcome.Outcome)
	case ModelReconciled:
		r.add("model.reconciled:" + ev.Outcome.Outcome)
	case ToolStarted:
		r.add("tool.started:" + ev.Tool.Tool)
	case ToolCompleted:
		r.add("tool.completed:" + ev.Tool.Tool + ":" + ev.Outcome.Outcome)
	}
}

// call is a scripted tool call.
func call(id, name, args string) providertest.ToolCall {
	return providertest.ToolCall{ID: id, Name: name, Arguments: args}
}

func text(s string) providertest.Reply { return providertest.Reply{Text: s} }

func calls(cs ...providertest.ToolCall) providertest.Reply {
	return providertest.Reply{ToolCalls: cs}
}

func usage(prompt, completion int64) *providertest.Usage {
	return &providertest.Usage{PromptTokens: prompt, CompletionTokens: completion}
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func providerWithIdle(url string, idleMs int) (*provider.Client, error) {
	return provider.New(provider.Config{Endpoint: url, APIKey: "test-key", IdleTimeout: time.Duration(idleMs) * time.Millisecond})
}
