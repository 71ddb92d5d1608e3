package ui

import (
	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/session"
)

// ToolStartLine is the tool log line "◆ <tool> <short args>", at most width
// cells (0 means the default width). One-shot mode prints it on stderr.
func ToolStartLine(t agent.ToolInfo, width int) string { return toolStartLine(t, width) }

// UsageLine is the usage line of one operation, e.g. "12.3k in · 850 out ·
// 83% cached · 41% of window" (window 0: unknown, not shown).
func UsageLine(u session.Usage, lastPrompt, window int64) string {
	return usageMeter{total: u, lastPrompt: lastPrompt, window: window}.line()
}
