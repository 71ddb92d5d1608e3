package ui

import (
	"context"
	"errors"
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/tiny-agent/tiny-go/internal/approval"
)

// Approval prompts (--approval ask). The agent's goroutine asks through
// Observer.Ask; the attached UI shows the call (the whole detail goes to
// the scrollback, so a diff longer than the screen can be scrolled) and
// answers with the key the user pressed: y, a, n (then an optional reason
// and Enter) or Esc, which aborts the operation the usual way.

// ErrNotAttached is returned by Ask when no UI is attached to put the
// question to (before the UI starts, or after it ended).
var ErrNotAttached = errors.New("no interactive UI to ask")

// approvalMsg carries one question to the UI; the answer goes back on
// reply (buffered, so the UI never blocks on it).
type approvalMsg struct {
	prompt approval.Prompt
	reply  chan approval.Answer
}

// Ask puts p to the user through the attached UI and waits for the answer
// or for ctx to end (an abort, or the process stopping).
func (o *Observer) Ask(ctx context.Context, p approval.Prompt) (approval.Answer, error) {
	msg := approvalMsg{prompt: p, reply: make(chan approval.Answer, 1)}
	if !o.send(msg) {
		return approval.Answer{}, ErrNotAttached
	}
	select {
	case a := <-msg.reply:
		if a.Choice != approval.Deny && isDiff(p.Detail) {
			o.log.shownInQuestion() // the tool log then leaves the diff out
		}
		return a, nil
	case <-ctx.Done():
		return approval.Answer{}, ctx.Err()
	}
}

var (
	addStyle = lipgloss.NewStyle().Foreground(lipgloss.Color("2"))
	delStyle = lipgloss.NewStyle().Foreground(lipgloss.Color("1"))
)

// promptHeader is "◆ <tool> wants to: <action>".
func promptHeader(p approval.Prompt) string {
	h := "◆ " + sanitizeLine(p.Tool) + " wants to: " + sanitizeLine(p.Action)
	if p.Asker != "" {
		h = "◆ the " + sanitizeLine(p.Asker) + "'s " + sanitizeLine(p.Tool) + " wants to: " + sanitizeLine(p.Action)
	}
	if p.Recovery {
		h += " (asked again after a restart)"
	}
	return h
}

// promptDetail is the detail, indented, control characters neutralized;
// colored when color is set (diff lines).
func promptDetail(p approval.Prompt, color bool) []string {
	diff := isDiff(p.Detail)
	out := make([]string, 0, len(p.Detail))
	for _, l := range p.Detail {
		l = strings.ReplaceAll(sanitize(l), "\n", " ")
		l = strings.ReplaceAll(l, "\t", "    ")
		if color && diff {
			switch {
			case strings.HasPrefix(l, "+") && !strings.HasPrefix(l, "+++"):
				l = addStyle.Render(l)
			case strings.HasPrefix(l, "-") && !strings.HasPrefix(l, "---"):
				l = delStyle.Render(l)
			case strings.HasPrefix(l, "@@"):
				l = faint.Render(l)
			}
		}
		out = append(out, "    "+l)
	}
	return out
}

// isDiff reports whether a question's detail is a unified diff.
func isDiff(detail []string) bool {
	return len(detail) > 2 && strings.HasPrefix(detail[0], "--- ") && strings.HasPrefix(detail[1], "+++ ")
}

// promptChoices is the key help of a question.
func promptChoices(p approval.Prompt) string {
	s := "y allow once"
	if p.Always != "" {
		s += " · a always allow " + sanitizeLine(p.Always)
	}
	return s + " · n deny · Esc abort"
}

// pendingApproval is the question on screen.
type pendingApproval struct {
	msg    approvalMsg
	reason bool   // n was pressed: the input holds the reason
	draft  string // the input's text before the reason was asked for
}

// approvalUpdate handles the messages of a question: its arrival and, while
// it is on screen, every key. handled is false for everything else.
func (m *model) approvalUpdate(msg tea.Msg) (cmd tea.Cmd, handled bool) {
	switch msg := msg.(type) {
	case approvalMsg:
		m.approval = &pendingApproval{msg: msg}
		m.print(toolStyle.Render(promptHeader(msg.prompt)))
		if d := promptDetail(msg.prompt, true); len(d) > 0 {
			m.print(strings.Join(d, "\n"))
		}
		m.setPhase("Waiting for your approval")
		return nil, true
	case cancelRequestedMsg, runDoneMsg, compactDoneMsg:
		// The abort (or the end of the operation) ends the wait; the
		// agent's context answers it.
		m.dropApproval()
		return nil, false
	case tea.KeyPressMsg:
		if m.approval == nil {
			return nil, false
		}
		return m.approvalKey(msg), true
	}
	return nil, false
}

func (m *model) approvalKey(k tea.KeyPressMsg) tea.Cmd {
	pa := m.approval
	switch k.String() {
	case "ctrl+c":
		return m.interrupt()
	case "esc":
		m.dropApproval()
		return m.abort()
	}
	if pa.reason {
		if k.String() == "enter" {
			m.answer(approval.Answer{Choice: approval.Deny, Reason: strings.TrimSpace(m.input.Value())}, "denied")
			return nil
		}
		return m.updateInput(k)
	}
	switch strings.ToLower(k.String()) {
	case "y":
		m.answer(approval.Answer{Choice: approval.Once}, "allowed once")
	case "a":
		if pa.msg.prompt.Always == "" {
			m.answer(approval.Answer{Choice: approval.Once}, "allowed once")
			break
		}
		m.answer(approval.Answer{Choice: approval.Always}, "always allowed: "+sanitizeLine(pa.msg.prompt.Always))
	case "n":
		pa.reason = true
		pa.draft = m.input.Value()
		m.input.Reset()
	}
	return nil
}

// answer replies to the question on screen and records it in the
// scrollback.
func (m *model) answer(a approval.Answer, what string) {
	pa := m.approval
	pa.msg.reply <- a
	if a.Choice != approval.Deny {
		// A denial (and its reason) is said once, by the tool log.
		m.print(faint.Render("  └ " + what))
	}
	m.dropApproval()
	m.setPhase("Working")
}

// dropApproval takes the question off the screen, giving the input back
// what it held before a reason was typed.
func (m *model) dropApproval() {
	pa := m.approval
	if pa == nil {
		return
	}
	m.approval = nil
	if pa.reason {
		m.input.SetValue(pa.draft)
	}
}

// approvalView is the question's part of the live area.
func (m *model) approvalView() []string {
	pa := m.approval
	if pa == nil {
		return nil
	}
	if pa.reason {
		return []string{bold.Render(truncate("Why not? Optional; Enter denies, Esc aborts.", m.width))}
	}
	q := fmt.Sprintf("Allow %s? ", sanitizeLine(pa.msg.prompt.Tool))
	if who := pa.msg.prompt.Asker; who != "" {
		q = fmt.Sprintf("Allow the %s's %s? ", sanitizeLine(who), sanitizeLine(pa.msg.prompt.Tool))
	}
	return choiceLines(q, promptChoices(pa.msg.prompt), m.width)
}

// choiceLines lays out the question and its choices within width: on one
// line when they fit, else wrapped between choices, so that no choice (Esc
// abort last of all) is ever cut off.
func choiceLines(q, choices string, width int) []string {
	if width <= 0 {
		width = lineWidth
	}
	if lipgloss.Width(q)+lipgloss.Width(choices) <= width {
		return []string{bold.Render(q) + faint.Render(choices)}
	}
	// The first line is the question and the choices that fit after it.
	var out []string
	head, line := truncate(q, width), ""
	for _, c := range strings.Split(choices, " · ") {
		switch {
		case head != "" && line == "" && lipgloss.Width(head)+lipgloss.Width(c) <= width:
			line = c
		case head != "" && line != "" && lipgloss.Width(head)+lipgloss.Width(line)+3+lipgloss.Width(c) <= width:
			line += " · " + c
		case head != "" && line == "":
			out = append(out, bold.Render(head)) // no choice fits beside it
			head, line = "", c
		case head == "" && lipgloss.Width(line)+3+lipgloss.Width(c) <= width:
			line += " · " + c
		default:
			out = append(out, bold.Render(head)+faint.Render(truncate(line, max(width-lipgloss.Width(head), 1))))
			head, line = "", c
		}
	}
	return append(out, bold.Render(head)+faint.Render(truncate(line, max(width-lipgloss.Width(head), 1))))
}
