package agent

import (
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tiny-agent/tiny-go/internal/session"
)

func msg(role session.Role, text string) session.Message {
	return session.Message{Role: role, Content: &text}
}

func TestWireCacheConvertsOnlyNewMessages(t *testing.T) {
	var c wireCache
	backing := make([]session.Message, 0, 8)
	backing = append(backing, msg(session.RoleUser, "q1"), msg(session.RoleAssistant, "a1"))
	first := c.messages("sys", backing[:2:2], nil, noDetails, nil)
	if len(first) != 3 || *first[0].Content != "sys" || *first[2].Content != "a1" {
		t.Fatalf("first: %+v", first)
	}
	backing = append(backing, msg(session.RoleUser, "q2"))
	second := c.messages("sys", backing[:3:3], nil, noDetails, nil)
	if len(second) != 4 || *second[3].Content != "q2" {
		t.Fatalf("second: %+v", second)
	}
	if &second[1] != &c.msgs[1] || second[1].Content != first[1].Content {
		t.Fatal("the unchanged prefix was converted again")
	}
	// A compaction shows as another array: everything is converted anew.
	compacted := []session.Message{msg(session.RoleUser, "[Compacted history]\nS"), msg(session.RoleUser, "q2")}
	third := c.messages("sys", compacted, nil, noDetails, nil)
	if len(third) != 3 || *third[1].Content != "[Compacted history]\nS" {
		t.Fatalf("after compaction: %+v", third)
	}
	// Results are capped: appending to one never writes into the cache.
	_ = append(third, third[0])
	if len(c.msgs) != 3 {
		t.Fatal("the cache grew through a caller's append")
	}
	// A new system prompt starts over.
	if got := c.messages("other", compacted, nil, noDetails, nil); *got[0].Content != "other" {
		t.Fatalf("system prompt: %q", *got[0].Content)
	}
}

func noDetails(string) jsontext.Value { return nil }
