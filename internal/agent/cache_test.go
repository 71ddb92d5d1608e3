package agent

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/tiny-agent/tiny-go/internal/provider"
	"github.com/tiny-agent/tiny-go/internal/providertest"
	"github.com/tiny-agent/tiny-go/internal/reasoning"
)

const claudeViaOpenRouter = "anthropic/claude-sonnet-4"

// withModel runs the agent on model.
func withModel(model string) harnessOption { return func(c *Config) { c.Model = model } }

// asNewProcess gives the agent what a new process has: a fresh provider
// client (no encoder state) and the reasoning details read back from the
// sidecar file.
func (h *harness) asNewProcess() harnessOption {
	return func(c *Config) {
		p, err := provider.New(provider.Config{Endpoint: h.server.URL(), APIKey: "test-key", IdleTimeout: 5 * time.Second})
		if err != nil {
			h.t.Fatal(err)
		}
		c.Provider = p
		rs, err := reasoning.Open(h.store.Path(), AdapterIdentity, c.Model, false)
		if err != nil {
			h.t.Fatal(err)
		}
		h.t.Cleanup(func() { rs.Close() })
		c.Reasoning = rs
	}
}

// chatBody is the part of a request body the prefix property is about.
type chatBody struct {
	Messages     jsontext.Value `json:"messages"`
	CacheControl jsontext.Value `json:"cache_control"`
}

// stepRequests returns the assistant-step requests (summary requests left
// out) with their raw messages arrays.
func stepRequests(t *testing.T, srv *providertest.Server) []chatBody {
	t.Helper()
	var out []chatBody
	for _, r := range srv.Requests() {
		if r.Chat.Messages[0].Content != nil && *r.Chat.Messages[0].Content == SummarySystemPrompt {
			continue
		}
		var b chatBody
		if err := json.Unmarshal(r.Body, &b); err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

// extends reports whether the messages of cur continue those of prev byte
// for byte: prev without its closing bracket is a prefix of cur.
func extends(prev, cur jsontext.Value) bool {
	return len(cur) > len(prev) && bytes.HasPrefix(cur, prev[:len(prev)-1])
}

// A 20-step task on Claude through OpenRouter: every request asks for
// caching, and every request's messages extend the previous request's byte
// for byte, reasoning details included, also across a crash and a resume
// in a new process; a compaction restarts the prefix exactly once.
func TestRequestPrefixIsStable(t *testing.T) {
	h := newHarness(t, nil, withModel(claudeViaOpenRouter))
	if err := os.WriteFile(filepath.Join(h.dir, "f.txt"), []byte("content\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// 20 replies for 19 tool steps and the answer, plus one for the step
	// the crash makes the resume send again.
	for i := 1; i < 21; i++ {
		r := calls(call(fmt.Sprintf("call_%d", i), "read", `{"path":"f.txt"}`))
		if i%3 == 0 {
			r.ReasoningDetails = []jsontext.Value{jsontext.Value(fmt.Sprintf(`{"type":"reasoning.encrypted","data":"step\/%d","index":0}`, i))}
		}
		h.server.Enqueue(r)
	}
	h.server.Enqueue(text("done"))

	// Process 1 dies when it commits the reply of step 10 (commit 39:
	// user+runStarted, then 4 commits per step).
	h.reopen(crashAt(3+4*9), withModel(claudeViaOpenRouter), h.asNewProcess())
	if _, err := h.agent.Run(context.Background(), "read f.txt twenty times"); !errors.Is(err, errCrash) {
		t.Fatalf("Run: %v, want the simulated crash", err)
	}
	h.reopen(withModel(claudeViaOpenRouter), h.asNewProcess())
	if res, err := h.agent.Resume(context.Background()); err != nil || res.Answer != "done" {
		t.Fatalf("Resume: %+v, %v", res, err)
	}
	// Short tasks after it, so the long one can be compacted (the last six
	// messages are kept).
	for i := range 3 {
		h.server.Enqueue(text(fmt.Sprintf("ok %d", i)))
		h.run(fmt.Sprintf("short task %d", i))
	}
	beforeCompaction := len(stepRequests(t, h.server))
	if beforeCompaction != 24 { // step 10 was sent twice
		t.Fatalf("%d step requests, want 24: %s", beforeCompaction, h.labels())
	}

	h.server.Enqueue(text("SUMMARY"))
	h.compact()
	h.reopen(withModel(claudeViaOpenRouter), h.asNewProcess())
	h.server.Enqueue(calls(call("c_a", "read", `{"path":"f.txt"}`)), calls(call("c_b", "read", `{"path":"f.txt"}`)), text("again"))
	h.run("once more")

	reqs := stepRequests(t, h.server)
	restarts := 0
	for i, r := range reqs {
		if string(r.CacheControl) != `{"type":"ephemeral"}` {
			t.Fatalf("request %d does not ask for caching", i+1)
		}
		if !bytes.Contains(r.Messages, []byte(`"cache_control":{"type":"ephemeral"}`)) {
			t.Fatalf("request %d has no system breakpoint", i+1)
		}
		if i == 0 {
			continue
		}
		switch {
		case bytes.Equal(r.Messages, reqs[i-1].Messages):
			if i != 10 {
				t.Fatalf("request %d repeats request %d, only the resent step may", i+1, i)
			}
		case extends(reqs[i-1].Messages, r.Messages):
		default:
			restarts++
			if i != beforeCompaction {
				t.Fatalf("request %d does not extend request %d:\n%s\n%s", i+1, i, reqs[i-1].Messages, r.Messages)
			}
		}
	}
	if restarts != 1 {
		t.Fatalf("the prefix restarted %d times, want once (the compaction)", restarts)
	}
	// The compaction summarized the long task: its details are no longer
	// sent.
	if after := reqs[beforeCompaction].Messages; bytes.Contains(after, []byte("reasoning_details")) {
		t.Fatalf("details of summarized messages are still sent: %s", after)
	}
	// Details of the last step before the crash were read back by the new
	// process, byte for byte.
	if !bytes.Contains(reqs[10].Messages, []byte(`"reasoning_details":[{"type":"reasoning.encrypted","data":"step\/9","index":0}]`)) {
		t.Fatalf("resumed request lacks the details of step 9: %s", reqs[10].Messages)
	}
}
