package ui

import (
	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/session"
)

// ToolStartLine is the tool log line "◆ <tool> <short args>", at most width
// cells (0 means the default width). One-shot mode prints it on stderr.
func ToolStartLine(t agent.ToolInfo, width int) string { return toolStartLine(t, width) }

// ToolResultLine is the tool log line "  └ <N chars | ok | (no output) |
// error>".
func ToolResultLine(t agent.ToolInfo, o agent.ToolOutcome) string { return toolResultLine(t, o) }

// UsageLine is the usage line "↑in ↓out R<cacheRead> W<cacheWrite>
// CH<rate>%" (↑ is the whole prompt: input + cache reads + cache writes).
func UsageLine(u session.Usage) string { return usageLine(u) }
