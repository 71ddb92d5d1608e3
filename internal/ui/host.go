package ui

import (
	"context"
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/tiny-agent/tiny-go/internal/session"
)

// Host carries out what reaches beyond the engine: the built-in commands
// that change or describe the session (/model, /status, /cost, /clear,
// /resume) and the shell escape (!cmd). The cli implements it; a nil Host
// makes those commands say they are unavailable.
type Host interface {
	// SetModel switches the model for the rest of the session.
	SetModel(id string) error
	// Status is /status, one item a line.
	Status() []string
	// Cost is /cost, one item a line.
	Cost() []string
	// NewSession starts a new session in the same directory and returns
	// its banner; the previous one stays resumable.
	NewSession() (Banner, error)
	// Sessions are the sessions /resume offers, newest first.
	Sessions() ([]SessionChoice, error)
	// Resume switches to session id; it returns the banner and the
	// transcript to recap.
	Resume(id string) (Banner, []session.Message, error)
	// Shell runs command as the bash tool runs commands (sandbox, process
	// group, output cap), records it so the model sees it with the next
	// prompt, and returns what to show.
	Shell(ctx context.Context, command string) (string, error)
}

// DiagnosticsHost is a Host that can run /diagnostics: the language
// servers' errors and warnings of path, or of every open file for "".
type DiagnosticsHost interface {
	Diagnostics(ctx context.Context, path string) []string
}

// diagnostics asks the host for /diagnostics; ok is false without
// language servers.
func diagnostics(ctx context.Context, h Host, path string) (lines []string, ok bool) {
	d, ok := h.(DiagnosticsHost)
	if !ok {
		return nil, false
	}
	return d.Diagnostics(ctx, path), true
}

// hostResultMsg ends a host call that ran off the UI goroutine.
type hostResultMsg struct {
	lines []string
	err   error
	shell bool // a !command ended
}

// hostCommand runs a built-in that needs the host. Quick ones answer at
// once; those that touch the session file run off the UI goroutine.
func (m *model) hostCommand(c command) tea.Cmd {
	if m.host == nil {
		m.print(errStyle.Render("This command is not available here."))
		return nil
	}
	h := m.host
	switch c.kind {
	case cmdStatus:
		m.printLines(sanitizeAll(h.Status()))
	case cmdCost:
		m.printLines(sanitizeAll(h.Cost()))
	case cmdInfo:
		m.printLines(sanitizeAll(info(h, c.text)))
	case cmdModel:
		m.switchModel(h, c.text)
	case cmdClear:
		old := m.banner.SessionID
		b, err := h.NewSession()
		if err != nil {
			m.print(errStyle.Render("No new session: " + sanitizeLine(err.Error())))
			return nil
		}
		m.banner = b
		m.usage = usageMeter{}
		m.print(fmt.Sprintf("New session %s. The previous one is kept: tiny-go --session %s", sanitizeLine(b.SessionID), sanitizeLine(old)))
	case cmdResume:
		m.resumeSession(h, c.text)
	case cmdShell:
		return m.startShell(c.text)
	case cmdDiag:
		// Off the UI goroutine: a server may take its bound to answer.
		ctx := m.ctx
		return func() tea.Msg {
			lines, ok := diagnostics(ctx, h, c.text)
			if !ok {
				lines = []string{"Language servers are off (TINY_LSP=off, or neither write nor edit is offered)."}
			}
			return hostResultMsg{lines: lines}
		}
	}
	return nil
}

// switchModel is /model: without an id it names the model, with one it
// switches to it for the rest of the session.
func (m *model) switchModel(h Host, id string) {
	if id == "" {
		m.print("model: " + orNone(m.banner.Model) + faint.Render("  (/model <id> switches)"))
		return
	}
	if strings.ContainsAny(id, " \t\n") {
		m.print(errStyle.Render("Usage: /model <id>"))
		return
	}
	if err := h.SetModel(id); err != nil {
		m.print(errStyle.Render("Model not changed: " + sanitizeLine(err.Error())))
		return
	}
	m.banner.Model = id
	m.print("Model: " + sanitizeLine(id) + " (for the rest of this session)")
}

// resumeSession is /resume: without an id it lists the directory's
// sessions, with one it switches to that session.
func (m *model) resumeSession(h Host, id string) {
	if id == "" {
		list, err := h.Sessions()
		if err != nil {
			m.print(errStyle.Render(sanitizeLine(err.Error())))
			return
		}
		lines := []string{"Sessions of this directory (newest first); /resume <id> switches:"}
		for i, s := range list {
			if i == 20 {
				lines = append(lines, fmt.Sprintf("  … and %d more", len(list)-i))
				break
			}
			mark := "  "
			if s.ID == m.banner.SessionID {
				mark = "* "
			}
			lines = append(lines, truncate(mark+s.ID+"  "+s.Title()+"  ("+age(m.now().Sub(s.Started))+" · "+s.State+")", m.width-1))
		}
		m.printLines(lines)
		return
	}
	b, recap, err := h.Resume(id)
	if err != nil {
		m.print(errStyle.Render("Not resumed: " + sanitizeLine(err.Error())))
		return
	}
	m.banner = b
	m.usage = usageMeter{}
	m.print("Resumed session " + sanitizeLine(b.SessionID) + ".")
	m.printLines(recapLines(recap, m.width-1, &m.md, colorStyles(), func(s string) string { return bold.Render(s) }))
}

// startShell runs a !command as an operation: Esc stops it.
func (m *model) startShell(command string) tea.Cmd {
	m.beginOp(opShell, "Running !"+sanitizeLine(command))
	ctx, cancel := context.WithCancel(m.ctx)
	m.cancelShell = cancel
	h, calls := m.host, m.calls
	calls.Add(1)
	return tea.Batch(m.tick(), func() tea.Msg {
		defer calls.Done()
		defer cancel()
		out, err := h.Shell(ctx, command)
		return hostResultMsg{lines: strings.Split(strings.TrimRight(out, "\n"), "\n"), err: err, shell: true}
	})
}

func (m *model) hostResult(msg hostResultMsg) {
	if msg.shell {
		m.cancelShell = nil
		m.endOp()
	}
	if msg.err != nil {
		m.print(errStyle.Render(sanitizeLine(msg.err.Error())))
		return
	}
	if len(msg.lines) > 0 && !(len(msg.lines) == 1 && msg.lines[0] == "") {
		m.printLines(sanitizeAll(msg.lines))
	}
}

func errLines(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = errStyle.Render(sanitizeLine(l))
	}
	return out
}

// hostLine runs a host command in line mode.
func (r *lineRunner) hostLine(ctx context.Context, c command) {
	h := r.opts.Host
	if h == nil {
		r.pr.println("This command is not available here.")
		return
	}
	var lines []string
	var err error
	switch c.kind {
	case cmdStatus:
		lines = h.Status()
	case cmdCost:
		lines = h.Cost()
	case cmdInfo:
		lines = info(h, c.text)
	case cmdModel:
		if c.text == "" {
			lines = []string{"model: " + orNone(r.opts.Banner.Model)}
		} else if err = h.SetModel(c.text); err == nil {
			r.opts.Banner.Model = c.text
			lines = []string{"Model: " + c.text + " (for the rest of this session)"}
		}
	case cmdClear:
		var b Banner
		if b, err = h.NewSession(); err == nil {
			lines = []string{fmt.Sprintf("New session %s. The previous one is kept: tiny-go --session %s", b.SessionID, r.opts.Banner.SessionID)}
			r.opts.Banner = b
		}
	case cmdResume:
		if c.text == "" {
			var list []SessionChoice
			list, err = h.Sessions()
			for _, s := range list {
				lines = append(lines, s.ID+"  "+s.Title())
			}
		} else {
			var b Banner
			if b, _, err = h.Resume(c.text); err == nil {
				r.opts.Banner = b
				lines = []string{"Resumed session " + b.SessionID + "."}
			}
		}
	case cmdShell:
		var out string
		out, err = h.Shell(ctx, c.text)
		lines = []string{strings.TrimRight(out, "\n")}
	case cmdDiag:
		var ok bool
		if lines, ok = diagnostics(ctx, h, c.text); !ok {
			lines = []string{"Language servers are off (TINY_LSP=off, or neither write nor edit is offered)."}
		}
	}
	if err != nil {
		lines = append(lines, err.Error())
	}
	r.pr.println(strings.Join(sanitizeAll(lines), "\n"))
}
