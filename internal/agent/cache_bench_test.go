package agent

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/tiny-agent/tiny-go/internal/provider"
	"github.com/tiny-agent/tiny-go/internal/provider/anthropic"
	"github.com/tiny-agent/tiny-go/internal/providertest"
)

// cacheTaskSteps is the length of the scripted task of
// BenchmarkUncacheableSuffix.
const cacheTaskSteps = 50

// anthropicMarker matches the cache breakpoints of a Messages API body:
// Anthropic's cache key is the content, not where the breakpoints are, so
// a moved breakpoint does not make the prefix before it uncacheable.
var anthropicMarker = regexp.MustCompile(`,"cache_control":\{"type":"ephemeral"\}`)

// BenchmarkUncacheableSuffix runs a 50-step scripted task (each step reads
// a 2 KB file) and measures, per request, the bytes after the longest
// prefix shared with the previous request: what a provider with prompt
// caching bills at the full price. The suffix must stay about constant
// (one tool result and one assistant turn) while the request grows.
// Reported: mean suffix (requests 2-50), the last request's suffix, the
// first and last request's size; ns/op is the whole task.
func BenchmarkUncacheableSuffix(b *testing.B) {
	for _, wire := range []string{"openrouter-claude", "anthropic-messages"} {
		b.Run(wire, func(b *testing.B) {
			var mean, last, size, first float64
			for b.Loop() {
				mean, last, size, first = cacheTask(b, wire)
			}
			b.ReportMetric(mean, "suffix-B/req")
			b.ReportMetric(last, "last-suffix-B")
			b.ReportMetric(first, "first-req-B")
			b.ReportMetric(size, "last-req-B")
		})
	}
}

func cacheTask(b *testing.B, wire string) (mean, last, size, firstSize float64) {
	b.Helper()
	var replies []providertest.Reply
	for i := 1; i < cacheTaskSteps; i++ {
		r := providertest.Reply{ToolCalls: []providertest.ToolCall{{ID: fmt.Sprintf("toolu_%d", i), Name: "read", Arguments: `{"path":"f.txt"}`}}}
		if wire == "openrouter-claude" {
			r.ReasoningDetails = []jsontext.Value{jsontext.Value(fmt.Sprintf(`{"type":"reasoning.text","text":"step %d","signature":"sig%d","index":0}`, i, i))}
		} else {
			r.Reasoning, r.Signature = fmt.Sprintf("step %d", i), fmt.Sprintf("sig%d", i)
		}
		replies = append(replies, r)
	}
	replies = append(replies, providertest.Reply{Text: "done"})
	h := newHarness(b, replies)
	if err := os.WriteFile(filepath.Join(h.dir, "f.txt"), bytes.Repeat([]byte("0123456789abcdef\n"), 120), 0o600); err != nil {
		b.Fatal(err)
	}
	cfg := h.cfg
	cfg.Model = claudeViaOpenRouter
	if wire == "anthropic-messages" {
		p, err := anthropic.New(anthropic.Config{Transport: provider.Config{Endpoint: h.server.URL(), APIKey: "k", IdleTimeout: 5 * time.Second}})
		if err != nil {
			b.Fatal(err)
		}
		cfg.Provider, cfg.Model, cfg.Identity = p, "claude-sonnet-4-5", Identity{Adapter: anthropic.AdapterIdentity, RoutingPrefix: anthropic.RoutingPrefix}
	}
	a, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if res, err := a.Run(ctx, "read f.txt fifty times"); err != nil || res.Answer != "done" {
		b.Fatalf("run: %+v %v", res, err)
	}
	var prev []byte
	var total float64
	reqs := h.server.Requests()
	for _, r := range reqs {
		body := promptOrder(b, wire, r.Body)
		shared := 0
		for shared < len(prev) && shared < len(body) && prev[shared] == body[shared] {
			shared++
		}
		last = float64(len(body) - shared)
		total += last
		prev = body
	}
	// The first request has no predecessor: it is all suffix; leave it out
	// of the mean.
	first := float64(len(promptOrder(b, wire, reqs[0].Body)))
	return (total - first) / float64(len(reqs)-1), last, float64(len(reqs[len(reqs)-1].Body)), first
}

// promptOrder is a request body in the order the provider caches it:
// tools, system and messages. A Messages API body is in that order
// already (its breakpoints removed); a Chat Completions body sends its
// tools after the messages, so they are moved in front.
func promptOrder(b *testing.B, wire string, body []byte) []byte {
	if wire == "anthropic-messages" {
		return anthropicMarker.ReplaceAll(body, nil)
	}
	var parts struct {
		Messages jsontext.Value `json:"messages"`
		Tools    jsontext.Value `json:"tools"`
	}
	if err := json.Unmarshal(body, &parts); err != nil {
		b.Fatal(err)
	}
	return append(append([]byte(nil), parts.Tools...), parts.Messages...)
}
