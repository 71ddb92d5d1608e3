package cli

import (
	"strings"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/providertest"
)

// A subdirectory's CLAUDE.md reaches the model with the result of the
// first read there, once: not again later in the session, nor after a
// resume (the result is a committed fact, and the system message stays
// as it was); a failed read and a read in the working directory bring
// none.
func TestSubdirectoryInstructionsOnFirstUse(t *testing.T) {
	h := newHookRun(t, "",
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c1", "read", `{"path":"api/missing.go"}`)}},
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c2", "read", `{"path":"main.go"}`)}},
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c3", "read", `{"path":"api/handler.go"}`)}},
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c4", "edit", `{"path":"api/handler.go","edits":[{"oldText":"package api","newText":"package api // v2"}]}`)}},
		providertest.Reply{Text: "First done."},
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c5", "read", `{"path":"api/other.go"}`)}},
		providertest.Reply{Text: "Second done."},
	)
	h.write("main.go", "package main\n")
	h.write("api/handler.go", "package api\n")
	h.write("api/other.go", "package api\n")
	h.write("api/CLAUDE.md", "API-RULES: handlers return errors, see @conventions.md\n")
	h.write("api/conventions.md", "API-CONVENTIONS\n")
	if code, _, stderr := h.run("-p", "work on the api"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if code, _, stderr := h.run("-c", "-p", "more"); code != 0 {
		t.Fatalf("resume: exit %d: %s", code, stderr)
	}
	reqs := h.srv.Requests()
	if len(reqs) != 7 {
		t.Fatalf("%d requests, want 7", len(reqs))
	}
	for _, id := range []string{"c1", "c2"} {
		if got := toolMessage(reqs[2], id); strings.Contains(got, "API-RULES") {
			t.Errorf("%s brought the instructions: %q", id, got)
		}
	}
	got := toolMessage(reqs[3], "c3")
	if !strings.Contains(got, `<project_instructions path="api/CLAUDE.md">`) || !strings.Contains(got, "API-CONVENTIONS") {
		t.Fatalf("the first read in api/ did not bring its CLAUDE.md: %q", got)
	}
	if sys := systemMessage(t, reqs[0]); strings.Contains(sys, "API-RULES") {
		t.Fatal("a subdirectory's file is in the system message")
	}
	for i, id := range map[int]string{4: "c4", 6: "c5"} {
		if got := toolMessage(reqs[i], id); strings.Contains(got, "API-RULES") {
			t.Errorf("%s brought the instructions again: %q", id, got)
		}
	}
	if sys0, sys6 := systemMessage(t, reqs[0]), systemMessage(t, reqs[6]); sys0 != sys6 {
		t.Error("the system message changed")
	}
}
