package ui

import (
	"fmt"

	"github.com/tiny-agent/tiny-go/internal/agent"
)

// contextUse is how full the model's context window was at the last
// request of a run, for the usage line.
type contextUse struct {
	prompt, window int64
}

// note keeps the figures of a settled assistant step.
func (c *contextUse) note(o agent.ModelOutcome) {
	if o.Outcome == "succeeded" && o.ContextWindow > 0 && o.PromptTokens > 0 {
		c.prompt, c.window = o.PromptTokens, o.ContextWindow
	}
}

// suffix is " ctx 42%" (the share of the window the last request used),
// or "" when unknown.
func (c contextUse) suffix() string {
	if c.window <= 0 || c.prompt <= 0 {
		return ""
	}
	return fmt.Sprintf(" ctx %d%%", c.prompt*100/c.window)
}
