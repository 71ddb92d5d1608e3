package approval

import (
	"context"
	"slices"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tiny-agent/tiny-go/internal/agent"
)

func fetch(url string) agent.ApprovalRequest {
	return agent.ApprovalRequest{Tool: "web_fetch", Display: "web_fetch", Builtin: true, Arguments: jsontext.Value(`{"url":"` + url + `","prompt":"what changed?"}`)}
}

// A fetch is asked about by its URL; "always" allows its host (kept
// beside the session and told to KeepAlso as a domain key), no other.
func TestGateAsksAboutFetchesByHost(t *testing.T) {
	path := sessionPath(t)
	s := &script{answers: []Answer{{Choice: Always}, {Choice: Deny, Reason: "no"}}}
	g, err := NewSessionGate(t.TempDir(), path, s.ask)
	if err != nil {
		t.Fatal(err)
	}
	var kept [][]string
	g.KeepAlso(func(keys [][]string) { kept = append(kept, keys...) })
	ctx := context.Background()
	if a, err := g.Approve(ctx, fetch("https://Docs.Python.org/3/")); err != nil || !a.Allow {
		t.Fatalf("%+v %v", a, err)
	}
	p := s.prompts[0]
	if p.Action != "Fetch https://Docs.Python.org/3/" || p.Always != "fetches from docs.python.org" || !slices.Equal(p.Detail, []string{"prompt: what changed?"}) {
		t.Fatalf("prompt = %+v", p)
	}
	if len(kept) != 1 || !slices.Equal(kept[0], []string{"web_fetch", "domain", "docs.python.org"}) {
		t.Fatalf("kept %q", kept)
	}
	if a, _ := g.Approve(ctx, fetch("https://docs.python.org/3/library/")); !a.Allow || len(s.prompts) != 1 {
		t.Fatalf("same host asked again: %+v", a)
	}
	if a, _ := g.Approve(ctx, fetch("https://evil.example/")); a.Allow || len(s.prompts) != 2 {
		t.Fatalf("another host: %+v", a)
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	rules, err := LoadRules(path)
	if err != nil || !slices.Contains(rules, "web_fetch\x00domain\x00docs.python.org") {
		t.Fatalf("kept rules %q, %v", rules, err)
	}
}
