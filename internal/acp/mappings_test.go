package acp_test

import (
	"testing"

	"github.com/tiny-agent/tiny-go/internal/providertest"
	"github.com/tiny-agent/tiny-go/internal/store/storetest"
)

// An editor that lists, loads, prompts and closes 200 sessions (leaving
// one in four open) through the official SDK client: the agent, one
// long-lived process, holds no mapping of any session file at any point
// between requests, so its mappings do not grow with the sessions it
// touched.
func TestSDKClientManySessionsLeaveNoMappings(t *testing.T) {
	if testing.Short() {
		t.Skip("200 sessions loaded through the SDK client")
	}
	const n = 200
	var replies []providertest.Reply
	for range n / 10 {
		replies = append(replies, providertest.Reply{Text: "Still fine."})
	}
	srv := providertest.New(t, replies...)
	dir := t.TempDir()
	storetest.InstallGenerated(t, dir, n, 150)

	seen := sdkClient(t, srv, dir, "sessions")

	if seen["listed"] != float64(n) || seen["loaded"] != float64(n) || seen["replayed"].(float64) < n {
		t.Fatalf("listed %v, loaded %v sessions (%v updates replayed); want %d", seen["listed"], seen["loaded"], seen["replayed"], n)
	}
	for _, r := range seen["stopReasons"].([]any) {
		if r != "end_turn" {
			t.Fatalf("a prompt ended %v", r)
		}
	}
	if srv.Pending() != 0 {
		t.Fatalf("%d model replies never asked for", srv.Pending())
	}
	maps := seen["maps"].([]any)
	if len(maps) != n/50+2 {
		t.Fatalf("%d counts of mappings", len(maps))
	}
	for i, m := range maps {
		if m != float64(0) {
			t.Fatalf("the agent maps %v session files at count %d (%v)", m, i, maps)
		}
	}
}
