package ui

import (
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/tiny-agent/tiny-go/internal/attach"
)

// mentionRows is the most paths the @ completion shows.
const mentionRows = 8

// mentionMenu completes the @path word at the cursor from the index of
// the working directory.
type mentionMenu struct {
	word  string // after the @
	items []string
	sel   int
}

// mentionWord is the @word being typed at the cursor, without the @.
func (m *model) mentionWord() (string, bool) {
	lines := strings.Split(m.input.Value(), "\n")
	row, col := m.input.Line(), m.input.Column()
	if row >= len(lines) {
		return "", false
	}
	r := []rune(lines[row])
	if col > len(r) {
		return "", false
	}
	before := string(r[:col])
	i := strings.LastIndexAny(before, " \t")
	word := before[i+1:]
	if !strings.HasPrefix(word, "@") {
		return "", false
	}
	return word[1:], true
}

// syncMentions recomputes the @ completion after the input changed.
func (m *model) syncMentions() {
	word, ok := m.mentionWord()
	if !ok || m.mentions == nil || m.op != opNone {
		m.mention = mentionMenu{}
		return
	}
	if word != m.mention.word || m.mention.items == nil {
		m.mention.sel = 0
	}
	m.mention.word = word
	m.mention.items = m.mentions.Find(word, 50)
	if m.mention.sel >= len(m.mention.items) {
		m.mention.sel = 0
	}
}

// mentionKey handles a key while the completion is open.
func (m *model) mentionKey(k tea.KeyPressMsg) (tea.Cmd, bool) {
	mm := &m.mention
	if len(mm.items) == 0 {
		return nil, false
	}
	switch k.String() {
	case "up", "ctrl+p":
		mm.sel = (mm.sel + len(mm.items) - 1) % len(mm.items)
		return nil, true
	case "down", "ctrl+n":
		mm.sel = (mm.sel + 1) % len(mm.items)
		return nil, true
	case "esc":
		*mm = mentionMenu{}
		return nil, true
	case "tab", "enter":
		path := mm.items[mm.sel]
		for range []rune(mm.word) {
			m.updateInput(tea.KeyPressMsg{Code: tea.KeyBackspace})
		}
		m.input.InsertString(path)
		if !strings.HasSuffix(path, "/") {
			m.input.InsertString(" ")
		}
		m.syncMentions()
		if !strings.HasSuffix(path, "/") {
			*mm = mentionMenu{}
		}
		return nil, true
	}
	return nil, false
}

func (m *model) mentionView() []string {
	mm := m.mention
	if len(mm.items) == 0 {
		return nil
	}
	first := 0
	if mm.sel >= mentionRows {
		first = mm.sel - mentionRows + 1
	}
	var lines []string
	for i := first; i < len(mm.items) && i < first+mentionRows; i++ {
		line := truncate("  @"+sanitizeLine(mm.items[i]), m.width-1)
		if i == mm.sel {
			line = bold.Render(truncate("› @"+sanitizeLine(mm.items[i]), m.width-1))
		} else {
			line = faint.Render(line)
		}
		lines = append(lines, line)
	}
	return lines
}

// attachMentions resolves the @mentions of prompt; on error the prompt is
// not sent.
func (m *model) attachMentions(prompt string) (string, []string, error) {
	return attachMentions(m.mentions, m.images, prompt)
}

// attachMentions resolves the @mentions of prompt under idx's root: the
// prompt to send and a note for each attachment.
func attachMentions(idx *attach.Index, images func(attach.Attachment) (string, error), prompt string) (string, []string, error) {
	if idx == nil {
		return prompt, nil, nil
	}
	atts, err := attach.Expand(idx.Root(), prompt)
	if err != nil {
		return "", nil, err
	}
	var notes []string
	for _, a := range atts {
		if a.Kind == "image" {
			if images == nil {
				return "", nil, &attach.Error{Mention: a.Mention, Reason: "images cannot be attached here"}
			}
			ref, err := images(a)
			if err != nil {
				return "", nil, &attach.Error{Mention: a.Mention, Reason: err.Error()}
			}
			a.Text = ref
		}
		notes = append(notes, a.Note)
		prompt = attach.Compose(prompt, []attach.Attachment{a})
	}
	return prompt, notes, nil
}
