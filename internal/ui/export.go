package ui

import "github.com/tiny-agent/tiny-go/internal/agent"

// ToolStartLine is the tool log line "◆ <tool> <short args>", at most width
// cells (0 means the default width). One-shot mode prints it on stderr.
func ToolStartLine(t agent.ToolInfo, width int) string { return toolStartLine(t, width) }

// ToolResultLine is the tool log line "  └ <N chars | ok | (no output) |
// error>".
func ToolResultLine(t agent.ToolInfo, o agent.ToolOutcome) string { return toolResultLine(t, o) }
