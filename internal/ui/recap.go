package ui

import (
	"strings"

	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/session"
)

// recapTurns is how many of the last user turns a resumed session shows.
const recapTurns = 3

// recapLines renders the last turns of a resumed conversation as they were
// shown: the prompt, the answers as Markdown, the tool calls and a line
// per result. An empty transcript shows nothing.
func recapLines(transcript []session.Message, width int, md *markdown, st logStyles, prompt func(string) string) []string {
	// A resumed compacted session passes its active context: the summary
	// first, which stands for the earlier turns and is not one of them.
	first := 0
	if len(transcript) > 0 && transcript[0].Role == session.RoleUser && transcript[0].Content != nil &&
		strings.HasPrefix(*transcript[0].Content, session.CompactedHistoryPrefix) {
		first = 1
	}
	start, users := len(transcript), 0
	for start > first && users < recapTurns {
		start--
		if transcript[start].Role == session.RoleUser {
			users++
		}
	}
	if users == 0 {
		return nil
	}
	var out []string
	switch {
	case start > first:
		out = append(out, st.dim.Render("… earlier turns of this session are in its file"))
	case first > 0:
		out = append(out, st.dim.Render("… earlier turns were compacted (the session file keeps them)"))
	}
	names := map[string]string{} // tool call id → tool name
	for _, m := range transcript[start:] {
		text := ""
		if m.Content != nil {
			text = *m.Content
		}
		switch m.Role {
		case session.RoleUser:
			out = append(out, prompt(echoLines(strings.TrimSpace(text))))
		case session.RoleAssistant:
			switch {
			case strings.TrimSpace(text) == "":
			case md == nil: // line mode: the text as it streamed
				out = append(out, strings.TrimRight(sanitize(text), "\n"))
			default:
				out = append(out, renderLines(md.render(text, width))...)
			}
			for _, c := range m.ToolCalls {
				names[c.ID] = c.Function.Name
				info := agent.ToolInfo{Tool: c.Function.Name, Display: c.Function.Name, Arguments: c.Function.Arguments}
				out = append(out, st.tool.Render(toolStartLine(info, width)))
			}
		case session.RoleTool:
			outcome := "succeeded"
			if strings.HasPrefix(text, "Error") || (names[m.ToolCallID] == "bash" && bashFailed(text)) {
				outcome = "failed"
			}
			r := buildReport(agent.ToolInfo{Tool: names[m.ToolCallID]}, agent.ToolOutcome{Outcome: outcome, Content: text}, nil)
			r.preview, r.more = nil, 0 // one line each: this is a reminder
			out = append(out, r.lines(width, st)...)
		}
	}
	return append(out, st.dim.Render("── resumed ──"))
}

// bashFailed reports whether a bash result's content says the command did
// not succeed (the transcript keeps no result type): a non-zero exit, a
// time-out, the cap or an abort.
func bashFailed(content string) bool {
	return exitCodeRE().MatchString(content) ||
		strings.HasSuffix(content, "Command aborted.") ||
		strings.HasSuffix(content, "complete output was not captured.") ||
		strings.Contains(content[max(0, len(content)-80):], "\n\nCommand timed out after ")
}
