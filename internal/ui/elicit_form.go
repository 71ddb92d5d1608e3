package ui

import (
	"context"
	"slices"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/tiny-agent/tiny-go/internal/approval"
	"github.com/tiny-agent/tiny-go/internal/mcp"
)

// formMsg carries an MCP server's form to the UI; the answer goes back on
// reply (buffered). A display that cannot show forms (RunLines) closes
// reply, and the form is put as a yes/no question instead.
type formMsg struct {
	form  mcp.Form
	reply chan mcp.ElicitAnswer
}

// formGoneMsg takes a form off the screen: the server stopped waiting.
type formGoneMsg struct{ reply chan mcp.ElicitAnswer }

// AskForm puts an MCP server's form to the user through the attached UI:
// the full-screen UI shows the form to fill in; the line display asks
// whether to send the defaults. An ended ctx (the server withdrew its
// request) cancels the form and takes it off the screen.
func (o *Observer) AskForm(ctx context.Context, f mcp.Form) (mcp.ElicitAnswer, error) {
	msg := formMsg{form: f, reply: make(chan mcp.ElicitAnswer, 1)}
	if !o.send(msg) {
		return mcp.ElicitAnswer{}, ErrNotAttached
	}
	select {
	case a, ok := <-msg.reply:
		if ok {
			return a, nil
		}
	case <-ctx.Done():
		o.send(formGoneMsg{reply: msg.reply})
		return mcp.ElicitAnswer{Action: mcp.ElicitCancel}, nil
	}
	ans, err := o.Ask(ctx, FormPrompt(f))
	switch {
	case err != nil:
		return mcp.ElicitAnswer{Action: mcp.ElicitCancel}, nil
	case ans.Choice == approval.Deny:
		return mcp.ElicitAnswer{Action: mcp.ElicitDecline}, nil
	}
	return mcp.ElicitAnswer{Action: mcp.ElicitAccept, Content: f.Defaults()}, nil
}

// pendingForm is a form on screen, or waiting behind it.
type pendingForm struct {
	msg   formMsg
	model *formModel
}

// formUpdate handles a form's arrival and, while one is on screen, the
// keys and pastes. handled is false for everything else.
func (m *model) formUpdate(msg tea.Msg) (cmd tea.Cmd, handled bool) {
	switch msg := msg.(type) {
	case formMsg:
		m.forms = append(m.forms, &pendingForm{msg: msg, model: newFormModel(msg.form)})
		if len(m.forms) == 1 {
			m.showForm()
		}
		return nil, true
	case formGoneMsg:
		m.withdrawForm(msg.reply)
		return nil, true
	case tea.KeyPressMsg:
		if len(m.forms) == 0 {
			return nil, false
		}
		if msg.String() == "ctrl+c" {
			m.answerForm(mcp.ElicitAnswer{Action: mcp.ElicitCancel})
			return m.interrupt(), true
		}
		res, cmd := m.forms[0].model.key(msg)
		if res.done {
			m.answerForm(res.answer)
		}
		return cmd, true
	case tea.PasteMsg:
		if len(m.forms) == 0 {
			return nil, false
		}
		return m.forms[0].model.paste(msg), true
	}
	return nil, false
}

// showForm prints the first form's question above the live area; a
// message of several lines keeps them, indented.
func (m *model) showForm() {
	f := m.forms[0].msg.form
	lines := strings.Split(strings.TrimSpace(sanitize(f.Message)), "\n")
	lines[0] = toolStyle.Render("◆ MCP " + sanitizeLine(f.Server) + " asks: " + lines[0])
	for i := 1; i < len(lines); i++ {
		lines[i] = "  " + strings.ReplaceAll(lines[i], "\t", "    ")
	}
	m.print(strings.Join(lines, "\n"))
	m.setPhase("Waiting for your answer")
}

// answerForm replies to the form on screen, says in the scrollback what
// was sent, and shows the next form, if any.
func (m *model) answerForm(a mcp.ElicitAnswer) {
	pf := m.forms[0]
	pf.msg.reply <- a
	m.forms = m.forms[1:]
	m.print(faint.Render("  └ " + answerSummary(pf.msg.form, a)))
	if len(m.forms) > 0 {
		m.showForm()
		return
	}
	m.setPhase("Working")
}

// withdrawForm drops the form whose answer goes to reply, if it is still
// there: its server no longer waits for it.
func (m *model) withdrawForm(reply chan mcp.ElicitAnswer) {
	for i, pf := range m.forms {
		if pf.msg.reply != reply {
			continue
		}
		m.forms = slices.Delete(m.forms, i, i+1)
		if i > 0 {
			return
		}
		m.print(faint.Render("  └ withdrawn by the server"))
		if len(m.forms) > 0 {
			m.showForm()
			return
		}
		m.setPhase("Working")
		return
	}
}

// answerSummary is "sent Name=Ada, Age=36", "declined" or "cancelled".
func answerSummary(f mcp.Form, a mcp.ElicitAnswer) string {
	switch a.Action {
	case mcp.ElicitDecline:
		return "declined"
	case mcp.ElicitCancel:
		return "cancelled"
	}
	var parts []string
	for _, fl := range f.Fields {
		if v, ok := a.Content[fl.Name]; ok {
			parts = append(parts, sanitizeLine(fl.Label())+"="+sanitizeLine(fl.Text(v)))
		}
	}
	if len(parts) == 0 {
		return "sent"
	}
	return "sent " + strings.Join(parts, ", ")
}

// formView is the form on screen (nil: none) in height lines, and where
// its cursor is.
func (m *model) formView(height int) ([]string, *tea.Cursor) {
	if len(m.forms) == 0 {
		return nil, nil
	}
	return m.forms[0].model.view(m.width, height)
}

// dropForms cancels every form, when the UI ends.
func (m *model) dropForms() {
	for _, pf := range m.forms {
		pf.msg.reply <- mcp.ElicitAnswer{Action: mcp.ElicitCancel}
	}
	m.forms = slices.Delete(m.forms, 0, len(m.forms))
}

// formFrame is the live area while a form is open: what is above it, then
// the form in place of the input box.
func (m *model) formFrame(above []string) tea.View {
	// What is above keeps its lines; the form gets the rest of the screen.
	lines, cur := m.formView(max(m.height-len(above), 4))
	v := tea.NewView(strings.Join(append(above, lines...), "\n"))
	if cur != nil {
		cur.Y += len(above)
		v.Cursor = cur
	}
	return v
}
