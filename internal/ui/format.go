package ui

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"

	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/session"
)

// Key help line of the banner (cli.md), one of the two, so that it never
// says two things of one key. In the terminal UI an idle Ctrl+C clears a
// draft first and exits only when pressed twice on an empty prompt; line
// mode reads whole lines (no Esc) and a Ctrl+C exits at once. Each fits
// 80 columns.
var helpKeys = bannerKeys()

const (
	helpKeysLine = "Ctrl+C aborts the active operation and exits; so does end of input (Ctrl+D)."
	helpCommands = "/help  /model  /compact  /skill:name  /exit  (/ lists all)"
)

// lineWidth bounds one-line summaries when the terminal width is unknown
// (line mode).
const lineWidth = 120

// bannerLines are the banner, one item a line; tui tells the terminal
// UI's keys from line mode's.
func bannerLines(b Banner, tui bool) []string {
	lines := []string{
		"tiny-go",
		"provider: " + orNone(b.Provider),
		"endpoint: " + orNone(b.Endpoint),
		"model: " + orNone(b.Model),
		"session id: " + orNone(b.SessionID),
		"session path: " + orNone(b.SessionPath),
		"tools: " + orNone(strings.Join(b.Tools, ", ")),
		"mcp: " + orNone(strings.Join(b.MCP, ", ")),
	}
	if b.Restored {
		lines = append(lines, "restored: yes")
	}
	if tui {
		lines = append(lines, helpKeys)
	} else {
		lines = append(lines, helpKeysLine)
	}
	return append(lines, helpCommands)
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return sanitizeLine(s)
}

// toolStartLine is "◆ <display name> <short args>", at most width cells.
func toolStartLine(t agent.ToolInfo, width int) string {
	if width <= 0 {
		width = lineWidth
	}
	if head, ok := namedCall(t.Tool, t.Arguments); ok {
		return truncate("◆ "+head, width)
	}
	name := sanitizeLine(t.Display)
	if name == "" {
		name = sanitizeLine(t.Tool)
	}
	head := "◆ " + name
	room := width - ansi.StringWidth(head) - 1
	if room < 8 {
		return truncate(head, width)
	}
	args := shortArgs(t.Tool, t.Arguments, room)
	if args == "" {
		return head
	}
	return head + " " + args
}

func zeroUsage(u session.Usage) bool { return u == session.Usage{} }

// TruncatedLine is what every mode says of a reply cut off by the token
// limit while it was calling tools (one-shot on stderr, the UI after the
// reply; ACP ends the prompt with max_tokens).
const TruncatedLine = "Stopped: the reply was cut off by the model token limit; its tool calls were not run."

// runOutcomeLine is the line after a run ends, "" for a normal completion.
func runOutcomeLine(res agent.Result, sessionID string) string {
	switch {
	case res.Blocked != "":
		return fmt.Sprintf("Blocked (%s): restore the matching configuration or run: tiny-go session abort %s", sanitizeLine(res.Blocked), sessionID)
	case res.Outcome == session.OutcomeAborted:
		return "Aborted."
	case res.Outcome == session.OutcomeFailed:
		return "Failed: " + errorInfoText(res.Error)
	case res.Completion == session.CompletionTruncated:
		return TruncatedLine
	}
	return ""
}

// compactOutcomeLine is the line after /compact.
func compactOutcomeLine(res agent.Result, st agent.CompactStats, err error, sessionID string) string {
	switch {
	case errors.Is(err, agent.ErrNothingToCompact):
		return "Nothing to compact."
	case err != nil:
		return errorLine(err)
	case res.Blocked != "":
		return runOutcomeLine(res, sessionID)
	case res.Outcome == session.OutcomeAborted:
		return "Compaction aborted."
	case res.Outcome == session.OutcomeFailed:
		return "Compaction failed: " + errorInfoText(res.Error)
	}
	return fmt.Sprintf("Compacted %d messages (kept last %d).", st.Compacted, st.Kept)
}

func errorInfoText(e *session.ErrorInfo) string {
	if e == nil || e.Message == "" {
		return "the operation failed"
	}
	return sanitizeLine(e.Message)
}

// errorLine is an error as one clear line.
func errorLine(err error) string {
	return "Error: " + sanitizeLine(err.Error())
}

// echoLines is the user's input as it is kept in the scrollback.
func echoLines(input string) string {
	lines := strings.Split(sanitize(input), "\n")
	for i, l := range lines {
		if i == 0 {
			lines[i] = "> " + l
		} else {
			lines[i] = "  " + l
		}
	}
	return strings.Join(lines, "\n")
}

// sanitize removes what would drive the terminal instead of being shown:
// escape sequences and other control characters (newlines and tabs stay;
// CR LF and lone CR become LF).
func sanitize(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	if !needsSanitizing(s) {
		return s
	}
	s = ansi.Strip(s)
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case r == '\r':
			b.WriteByte('\n')
		case r == utf8.RuneError, unicode.IsControl(r), r == '\u2028', r == '\u2029':
			// dropped
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func needsSanitizing(s string) bool {
	for _, r := range s {
		if (r != '\n' && r != '\t' && unicode.IsControl(r)) || r == utf8.RuneError || r == '\u2028' || r == '\u2029' {
			return true
		}
	}
	return false
}

// sanitizeLine is sanitize with every run of whitespace (newlines
// included) collapsed to one space.
func sanitizeLine(s string) string {
	return strings.Join(strings.Fields(sanitize(s)), " ")
}

// truncate cuts s to at most width cells (wide CJK characters count two,
// combining marks zero), ending with "…" when cut.
func truncate(s string, width int) string {
	if width <= 0 {
		return ""
	}
	if ansi.StringWidth(s) <= width {
		return s
	}
	return ansi.Truncate(s, width, "…")
}
