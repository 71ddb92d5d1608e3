package ui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"charm.land/bubbles/v2/list"
	tea "charm.land/bubbletea/v2"
)

// SessionChoice is one session the resume picker offers.
type SessionChoice struct {
	ID          string
	FirstPrompt string
	LastPrompt  string
	State       string // idle, open run, …
	Started     time.Time
	Origin      string // "fork of 01a23f82 at turn 3"; empty for a session that is no fork
}

func (c SessionChoice) Title() string {
	if c.FirstPrompt == "" {
		return "(no prompt yet)"
	}
	return sanitizeLine(c.FirstPrompt)
}

func (c SessionChoice) Description() string {
	d := age(time.Since(c.Started)) + " · " + c.State
	if c.Origin != "" {
		d += " · " + sanitizeLine(c.Origin)
	}
	if c.LastPrompt != "" && c.LastPrompt != c.FirstPrompt {
		d += " · last: " + sanitizeLine(c.LastPrompt)
	}
	return d + " · " + c.ID
}

// FilterValue is what typing after / narrows the list by.
func (c SessionChoice) FilterValue() string {
	return c.FirstPrompt + " " + c.LastPrompt + " " + c.ID
}

// age is a duration people read at a glance: "just now", "5m ago".
func age(d time.Duration) string {
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh ago", int(d.Hours()))
	default:
		return fmt.Sprintf("%dd ago", int(d.Hours()/24))
	}
}

// ErrNoChoice is PickSession's error when the user leaves the picker
// without choosing.
var ErrNoChoice = errors.New("no session chosen")

// PickSession shows the sessions (newest first), filterable with /, and
// returns the id of the one chosen with Enter. Esc or Ctrl+C leave with
// ErrNoChoice.
func PickSession(ctx context.Context, in io.Reader, out io.Writer, choices []SessionChoice) (string, error) {
	items := make([]list.Item, len(choices))
	for i, c := range choices {
		items[i] = c
	}
	l := list.New(items, list.NewDefaultDelegate(), 80, 20)
	l.Title = "Resume a session of this directory"
	l.SetShowStatusBar(true)
	p := tea.NewProgram(&picker{list: l}, tea.WithContext(ctx), tea.WithInput(in), tea.WithOutput(out))
	final, err := p.Run()
	if err != nil {
		return "", fmt.Errorf("resume picker: %w", err)
	}
	if id := final.(*picker).chosen; id != "" {
		return id, nil
	}
	return "", ErrNoChoice
}

type picker struct {
	list   list.Model
	chosen string
}

func (p *picker) Init() tea.Cmd { return nil }

func (p *picker) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		p.list.SetSize(msg.Width, msg.Height)
	case tea.KeyPressMsg:
		if p.list.SettingFilter() {
			break // typed keys go to the filter
		}
		switch msg.String() {
		case "enter":
			if c, ok := p.list.SelectedItem().(SessionChoice); ok {
				p.chosen = c.ID
			}
			return p, tea.Quit
		case "esc", "ctrl+c", "q":
			if p.list.FilterState() == list.Unfiltered || msg.String() == "ctrl+c" {
				return p, tea.Quit
			}
		}
	}
	var cmd tea.Cmd
	p.list, cmd = p.list.Update(msg)
	return p, cmd
}

func (p *picker) View() tea.View {
	v := tea.NewView(p.list.View())
	v.AltScreen = true
	return v
}
