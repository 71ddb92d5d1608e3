package ui

import (
	"testing"

	"github.com/tiny-agent/tiny-go/internal/agent"
)

func TestContextShareSuffix(t *testing.T) {
	var c contextUse
	if c.suffix() != "" {
		t.Fatal("unknown share shown")
	}
	c.note(agent.ModelOutcome{Outcome: "succeeded", PromptTokens: 54000, ContextWindow: 128000})
	if got := c.suffix(); got != " ctx 42%" {
		t.Fatalf("suffix %q", got)
	}
	// A failed attempt or a summary request (no window) leaves it as it was.
	c.note(agent.ModelOutcome{Outcome: "failed"})
	c.note(agent.ModelOutcome{Outcome: "succeeded", PromptTokens: 900000})
	if got := c.suffix(); got != " ctx 42%" {
		t.Fatalf("suffix %q", got)
	}
}
