package ui

import (
	"strings"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/session"
)

func TestRecapShowsTheLastTurns(t *testing.T) {
	str := func(s string) *string { return &s }
	var tr []session.Message
	for _, p := range []string{"one", "two", "three", "four"} {
		tr = append(tr, session.Message{Role: session.RoleUser, Content: str("prompt " + p)})
		tr = append(tr, session.Message{Role: session.RoleAssistant, Content: str("Looking."), ToolCalls: []session.ToolCall{{ID: "c-" + p, Type: "function", Function: session.FunctionCall{Name: "bash", Arguments: `{"command":"ls ` + p + `"}`}}}})
		tr = append(tr, session.Message{Role: session.RoleTool, ToolCallID: "c-" + p, Content: str("a\nb\n")})
		tr = append(tr, session.Message{Role: session.RoleAssistant, Content: str("Answer **" + p + "**.")})
	}
	got := stripANSI(strings.Join(recapLines(tr, 80, &markdown{}, plainStyles(), func(s string) string { return s }), "\n"))
	for _, want := range []string{"… earlier turns", "> prompt two", "◆ bash ls two\n  └ 4 chars", "Answer two.", "> prompt four", "Answer four.", "── resumed ──"} {
		if !strings.Contains(got, want) {
			t.Errorf("recap lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "prompt one") {
		t.Errorf("recap shows more than the last %d turns:\n%s", recapTurns, got)
	}
	if recapLines(nil, 80, nil, plainStyles(), nil) != nil {
		t.Error("an empty transcript shows a recap")
	}
}
