package ui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/tiny-agent/tiny-go/internal/mcp"
)

// formModel is an MCP server's form (elicitation) in the full-screen UI:
// one input per field with its default filled in. Text, number and integer
// fields are text inputs; a boolean is a yes/no toggle, an enum a choice
// list, a multi-select a list of check boxes. It knows nothing of the rest
// of the screen: the model (elicit_form.go) routes keys to it and shows
// its lines.
type formModel struct {
	form   mcp.Form
	fields []formField
	focus  int
}

type fieldKind int

const (
	fieldText fieldKind = iota
	fieldToggle
	fieldChoice
	fieldMulti
)

type formField struct {
	mcp.Field
	kind   fieldKind
	input  textinput.Model // fieldText
	on     bool            // fieldToggle: yes
	set    bool            // fieldToggle, fieldChoice: a value is chosen
	choice int             // fieldChoice: the chosen option; fieldMulti: the one under the cursor
	picked []bool          // fieldMulti
	err    string          // why the value is not valid, once the user left the field or sent
}

// formatExample is what an empty field of a format shows.
var formatExample = map[string]string{
	"email":     "name@example.com",
	"uri":       "https://…",
	"date":      "YYYY-MM-DD",
	"date-time": "YYYY-MM-DDThh:mm:ssZ",
}

// formKeyHelp is the form's key help, under its fields.
const formKeyHelp = "Tab/↑↓ move · Enter on the last field or Ctrl+S sends · Ctrl+D declines · Esc cancels"

func newFormModel(f mcp.Form) *formModel {
	fm := &formModel{form: f}
	for _, fl := range f.Fields {
		fm.fields = append(fm.fields, newFormField(fl))
	}
	if len(fm.fields) > 0 {
		fm.fields[0].focus()
	}
	return fm
}

// focus and blur matter to text inputs only.
func (f *formField) focus() tea.Cmd {
	if f.kind != fieldText {
		return nil
	}
	return f.input.Focus()
}

func (f *formField) blur() {
	if f.kind == fieldText {
		f.input.Blur()
	}
}

func newFormField(fl mcp.Field) formField {
	ff := formField{Field: fl}
	switch {
	case fl.Multi:
		ff.kind = fieldMulti
		ff.picked = make([]bool, len(fl.Enum))
		list, _ := fl.Default.([]string)
		for i, v := range fl.Enum {
			for _, d := range list {
				ff.picked[i] = ff.picked[i] || d == v
			}
		}
	case len(fl.Enum) > 0:
		ff.kind = fieldChoice
		for i, v := range fl.Enum {
			if v == fl.Default {
				ff.choice, ff.set = i, true
			}
		}
	case fl.Type == "boolean":
		ff.kind = fieldToggle
		ff.on, ff.set = fl.Default == true, fl.Default != nil
	default:
		ti := textinput.New()
		ti.Prompt = ""
		ti.SetVirtualCursor(false)
		// Ctrl+D declines the form; Delete still deletes forward.
		ti.KeyMap.DeleteCharacterForward.SetKeys("delete")
		if fl.MaxLength != nil {
			ti.CharLimit = *fl.MaxLength
		}
		ti.Placeholder = formatExample[fl.Format]
		ti.SetValue(fl.Text(fl.Default))
		ff.input = ti
	}
	return ff
}

// value is what the field holds: empty when nothing is chosen or typed
// (the field is then left out of the answer).
func (f *formField) value() (v any, empty bool, err error) {
	switch f.kind {
	case fieldToggle:
		return f.on, !f.set, nil
	case fieldChoice:
		if !f.set {
			return nil, true, nil
		}
		return f.Enum[f.choice], false, nil
	case fieldMulti:
		list := []string{}
		for i, p := range f.picked {
			if p {
				list = append(list, f.Enum[i])
			}
		}
		if len(list) == 0 && !f.Required {
			return nil, true, nil
		}
		return list, false, f.Check(list)
	}
	text := f.input.Value()
	if strings.TrimSpace(text) == "" {
		return nil, true, nil
	}
	if f.Type != "string" {
		text = strings.TrimSpace(text)
	}
	v, err = f.Parse(text)
	return v, false, err
}

// validate sets the field's error line and reports whether it is valid.
func (f *formField) validate() bool {
	_, empty, err := f.value()
	switch {
	case empty && f.Required:
		f.err = "required"
	case err != nil:
		f.err = err.Error()
	default:
		f.err = ""
	}
	return f.err == ""
}

// formResult is what a key did to the form: nothing yet, or the answer.
type formResult struct {
	done   bool
	answer mcp.ElicitAnswer
}

// key handles one key press.
func (fm *formModel) key(k tea.KeyPressMsg) (formResult, tea.Cmd) {
	switch k.String() {
	case "esc":
		return formResult{done: true, answer: mcp.ElicitAnswer{Action: mcp.ElicitCancel}}, nil
	case "ctrl+d":
		return formResult{done: true, answer: mcp.ElicitAnswer{Action: mcp.ElicitDecline}}, nil
	case "ctrl+s":
		return fm.submit(), nil
	case "enter":
		if fm.focus >= len(fm.fields)-1 {
			return fm.submit(), nil
		}
		return formResult{}, fm.move(1)
	case "tab", "down":
		return formResult{}, fm.move(1)
	case "shift+tab", "up":
		return formResult{}, fm.move(-1)
	}
	if len(fm.fields) == 0 {
		return formResult{}, nil
	}
	return formResult{}, fm.fields[fm.focus].edit(k)
}

// move leaves the field (saying what is wrong with it, if anything) for
// the next or previous one, round the form.
func (fm *formModel) move(by int) tea.Cmd {
	if len(fm.fields) == 0 {
		return nil
	}
	cur := &fm.fields[fm.focus]
	cur.validate()
	cur.blur()
	fm.focus = (fm.focus + by + len(fm.fields)) % len(fm.fields)
	return fm.fields[fm.focus].focus()
}

// submit accepts the form when every field is valid; else the first
// invalid field gets the focus, with its error under it.
func (fm *formModel) submit() formResult {
	content := map[string]any{}
	first := -1
	for i := range fm.fields {
		f := &fm.fields[i]
		if !f.validate() {
			if first < 0 {
				first = i
			}
			continue
		}
		if v, empty, _ := f.value(); !empty {
			content[f.Name] = v
		}
	}
	if first >= 0 {
		fm.fields[fm.focus].blur()
		fm.focus = first
		fm.fields[first].focus()
		return formResult{}
	}
	return formResult{done: true, answer: mcp.ElicitAnswer{Action: mcp.ElicitAccept, Content: content}}
}

// edit is a key within the focused field.
func (f *formField) edit(k tea.KeyPressMsg) tea.Cmd {
	key := k.String()
	switch f.kind {
	case fieldToggle:
		switch key {
		case "y":
			f.on, f.set = true, true
		case "n":
			f.on, f.set = false, true
		case "space", "left", "right":
			f.on, f.set = !f.on || !f.set, true
		}
	case fieldChoice:
		n := len(f.Enum)
		switch key {
		case "right", "space":
			if !f.set {
				f.choice, f.set = 0, true
			} else {
				f.choice = (f.choice + 1) % n
			}
		case "left":
			if !f.set {
				f.choice, f.set = n-1, true
			} else {
				f.choice = (f.choice - 1 + n) % n
			}
		}
	case fieldMulti:
		switch key {
		case "right":
			f.choice = (f.choice + 1) % len(f.Enum)
		case "left":
			f.choice = (f.choice - 1 + len(f.Enum)) % len(f.Enum)
		case "space", "x":
			f.picked[f.choice] = !f.picked[f.choice]
		}
	default:
		var cmd tea.Cmd
		f.input, cmd = f.input.Update(k)
		return cmd
	}
	return nil
}

// paste goes to the focused text input.
func (fm *formModel) paste(msg tea.PasteMsg) tea.Cmd {
	if len(fm.fields) == 0 || fm.fields[fm.focus].kind != fieldText {
		return nil
	}
	var cmd tea.Cmd
	f := &fm.fields[fm.focus]
	f.input, cmd = f.input.Update(msg)
	return cmd
}

var (
	formPicked = lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("6"))
	formCursor = lipgloss.NewStyle().Underline(true)
)

// view is the form's lines within width and at most height lines (a
// longer form shows the fields around the focused one), and where the
// cursor is (nil: in no text input) relative to the first line.
func (fm *formModel) view(width, height int) ([]string, *tea.Cursor) {
	labelW := 0
	for _, f := range fm.fields {
		labelW = max(labelW, lipgloss.Width(fieldLabel(f.Field)))
	}
	labelW = min(labelW, max(width/3, 8))
	blocks := make([][]string, len(fm.fields))
	var cur *tea.Cursor
	for i := range fm.fields {
		var c *tea.Cursor
		blocks[i], c = fm.fields[i].lines(i == fm.focus, labelW, width)
		if i == fm.focus {
			cur = c
		}
	}
	from, to := fm.window(blocks, height-1)
	var lines []string
	if from > 0 {
		lines = append(lines, faint.Render(fmt.Sprintf("  ↑ %d more", from)))
	}
	for i := from; i < to; i++ {
		if i == fm.focus && cur != nil {
			cur.Y = len(lines)
		}
		lines = append(lines, blocks[i]...)
	}
	if to < len(blocks) {
		lines = append(lines, faint.Render(fmt.Sprintf("  ↓ %d more", len(blocks)-to)))
	}
	return append(lines, faint.Render(truncate(formKeyHelp, width))), cur
}

// window is the fields [from, to) shown in room lines: all when they fit,
// else the focused one and its neighbours, with a line for each "more".
func (fm *formModel) window(blocks [][]string, room int) (from, to int) {
	total := 0
	for _, b := range blocks {
		total += len(b)
	}
	if total <= room || len(blocks) == 0 {
		return 0, len(blocks)
	}
	room -= 2 // the "more" lines
	from, to = fm.focus, fm.focus+1
	used := len(blocks[fm.focus])
	for grew := true; grew; {
		grew = false
		if to < len(blocks) && used+len(blocks[to]) <= room {
			used += len(blocks[to])
			to, grew = to+1, true
		}
		if from > 0 && used+len(blocks[from-1]) <= room {
			used += len(blocks[from-1])
			from, grew = from-1, true
		}
	}
	return from, to
}

// lines is the field's line, and its error line when it has one; cur is
// where the cursor is in its text input (Y 0), when focused.
func (f *formField) lines(focused bool, labelW, width int) (lines []string, cur *tea.Cursor) {
	mark := "  "
	if focused {
		mark = "› "
	}
	label := truncate(fieldLabel(f.Field), labelW)
	head := mark + label + strings.Repeat(" ", labelW-lipgloss.Width(label)) + "  "
	if f.kind == fieldText {
		// Room for the value, and the hint beside it.
		f.input.SetWidth(min(max(width-lipgloss.Width(head)-1, 4), 32))
		if c := f.input.Cursor(); c != nil && focused {
			c.X += lipgloss.Width(head)
			cur = c
		}
	}
	line := head + f.widget(focused, width-lipgloss.Width(head))
	if hint := f.hint(); focused && hint != "" {
		line += "  " + faint.Render(hint)
	}
	lines = append(lines, truncate(line, width))
	if f.err != "" {
		lines = append(lines, errStyle.Render(truncate("    ✗ "+sanitizeLine(f.Label())+": "+f.err, width)))
	}
	return lines, cur
}

// fieldLabel is the title (else the name), with * when required.
func fieldLabel(f mcp.Field) string {
	l := sanitizeLine(f.Label())
	if f.Required {
		l += " *"
	}
	return l
}

// hint is the field's description and constraints, shown while it has
// the focus.
func (f *formField) hint() string {
	parts := []string{}
	if f.Description != "" {
		parts = append(parts, sanitizeLine(f.Description))
	}
	if h := f.Hint(); h != "" {
		parts = append(parts, h)
	}
	switch f.kind {
	case fieldToggle, fieldChoice:
		parts = append(parts, "←/→ to choose")
	case fieldMulti:
		parts = append(parts, "←/→ and Space to pick")
	}
	return strings.Join(parts, " · ")
}

// widget is the field's value as the user edits it, within room columns:
// a list of options too long for it shows only the chosen one (the one
// under the cursor for a multi-select), with where it is in the list.
func (f *formField) widget(focused bool, room int) string {
	switch f.kind {
	case fieldToggle:
		return radio("yes", f.set && f.on) + "  " + radio("no", f.set && !f.on)
	case fieldChoice:
		opts := make([]string, len(f.Enum))
		for i := range f.Enum {
			opts[i] = radio(sanitizeLine(f.OptionLabel(i)), f.set && f.choice == i)
		}
		if !f.set {
			return fitOptions(opts, 0, room, "none chosen")
		}
		return fitOptions(opts, f.choice, room, "")
	case fieldMulti:
		opts := make([]string, len(f.Enum))
		picked := 0
		for i := range f.Enum {
			box := "[ ] "
			if f.picked[i] {
				box = "[x] "
				picked++
			}
			opts[i] = box + sanitizeLine(f.OptionLabel(i))
			if focused && i == f.choice {
				opts[i] = formCursor.Render(opts[i])
			}
		}
		return fitOptions(opts, f.choice, room, fmt.Sprintf("%d picked", picked))
	}
	return f.input.View()
}

// fitOptions is opts side by side when they fit in room, else option at
// alone: "‹ (•) Europe › 2/30".
func fitOptions(opts []string, at, room int, note string) string {
	all := strings.Join(opts, "  ")
	if lipgloss.Width(all) <= room {
		return all
	}
	s := "‹ " + opts[at] + " › " + faint.Render(fmt.Sprintf("%d/%d", at+1, len(opts)))
	if note != "" {
		s += faint.Render(" · " + note)
	}
	return s
}

func radio(label string, on bool) string {
	if on {
		return formPicked.Render("(•) " + label)
	}
	return "( ) " + label
}
