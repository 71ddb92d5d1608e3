package acp

import (
	"cmp"
	"strings"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/tiny-agent/tiny-go/internal/planmode"
	"github.com/tiny-agent/tiny-go/internal/session"
	"github.com/tiny-agent/tiny-go/internal/todo"
)

// replay sends the session's visible history to the client, as
// session/load asks: user messages, the agent's answers, and each tool
// call with its final status and result. Turns a compaction summarized
// show their prompts and then the summary (their answers are not held).
func (s *sess) replay() {
	st := s.s.State()
	display := map[string]string{}
	for _, t := range s.s.Agent().Config().Tools {
		if d := t.Definition(); d.Display != "" {
			display[d.Name] = d.Display
		}
	}
	msgs := replayed(st)
	results := map[string]string{}
	for _, m := range msgs {
		if m.Role == session.RoleTool && m.Content != nil {
			results[m.ToolCallID] = *m.Content
		}
	}
	for _, m := range msgs {
		switch m.Role {
		case session.RoleUser:
			if m.Content != nil {
				s.update(acpsdk.UpdateUserMessageText(planmode.Strip(*m.Content)))
			}
		case session.RoleAssistant:
			if m.Content != nil && *m.Content != "" {
				s.update(acpsdk.UpdateAgentMessageText(*m.Content))
			}
			for _, tc := range m.ToolCalls {
				// The file a write or edit changed has changed since: no
				// diff, only the call and its result.
				name := cmp.Or(display[tc.Function.Name], tc.Function.Name)
				c := describeCall(tc.Function.Name, name, tc.Function.Arguments, "")
				c.locations = absLocations(c.locations, s.workDir())
				out, ok := results[tc.ID]
				status := acpsdk.ToolCallStatusCompleted
				switch {
				case !ok:
					status = acpsdk.ToolCallStatusPending
				case failedResult(out):
					status = acpsdk.ToolCallStatusFailed
				}
				if ok && out != "" {
					c.content = []acpsdk.ToolCallContent{acpsdk.ToolContent(acpsdk.TextBlock(clip(out)))}
				}
				s.update(c.start(tc.ID, status))
			}
		}
	}
	if l := todo.FromState(st); l != nil {
		s.plan(l)
	}
}

// replayed is the history session/load shows: the transcript, except that
// the turns whose answers the store released when it opened the session
// (a compaction summarized them) show their prompts and then the summary,
// as the agent's, which stands for them as it does for the model.
func replayed(st *session.State) []session.Message {
	if st.Released == 0 {
		return st.Transcript
	}
	out := make([]session.Message, 0, len(st.Transcript)+1)
	for _, m := range st.Transcript[:st.Released] {
		if m.Role == session.RoleUser {
			out = append(out, m)
		}
	}
	if len(st.ActiveEntryIDs) > 0 && st.ActiveEntryIDs[0] == "" {
		out = append(out, session.Message{Role: session.RoleAssistant, Content: st.ActiveContext[0].Content})
	}
	return append(out, st.Transcript[st.Released:]...)
}

// failedResult tells a failed tool result by its content: tools.md makes
// every failure start with "Error", and an interrupted one has fixed text.
func failedResult(content string) bool {
	return strings.HasPrefix(content, "Error") || content == session.ContentInterrupted
}

func absLocations(ls []acpsdk.ToolCallLocation, workDir string) []acpsdk.ToolCallLocation {
	for i := range ls {
		if workDir != "" && !strings.HasPrefix(ls[i].Path, "/") {
			ls[i].Path = workDir + "/" + ls[i].Path
		}
	}
	return ls
}
