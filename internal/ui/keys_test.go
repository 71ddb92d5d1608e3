package ui

import (
	"os"
	"strings"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/approval"
)

// TestKeysAgree: /help, the banner, the footer hints and docs/usage.md's
// keys table all say what KeyBindings says (issue 47: they drifted).
func TestKeysAgree(t *testing.T) {
	help := strings.Join(helpLines(nil), "\n")
	for _, k := range KeyBindings {
		if !strings.Contains(help, padRight(k.Keys, 22)+" "+k.Does) {
			t.Errorf("/help does not say %q: %s", k.Keys, k.Does)
		}
		if k.Banner != "" && !strings.Contains(helpKeys, k.Banner) {
			t.Errorf("the banner's key line %q leaves out %q", helpKeys, k.Banner)
		}
	}
	b, err := os.ReadFile("../../docs/keys-and-commands.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(b), "<!-- keys -->\n")
	if !ok {
		t.Fatal("docs/keys-and-commands.md has no <!-- keys --> table")
	}
	var rows []string
	for i, line := range strings.Split(table, "\n") {
		if !strings.HasPrefix(line, "|") {
			break
		}
		if i >= 2 {
			cells := strings.Split(line, " | ")
			rows = append(rows, strings.Trim(strings.TrimPrefix(cells[0], "| "), "`")+" = "+strings.TrimSuffix(strings.Join(cells[1:], " | "), " |"))
		}
	}
	var want []string
	for _, k := range KeyBindings {
		want = append(want, k.Keys+" = "+k.Does)
	}
	if strings.Join(rows, "\n") != strings.Join(want, "\n") {
		t.Errorf("docs/keys-and-commands.md's keys table:\n%s\nwant (ui.KeyBindings):\n%s", strings.Join(rows, "\n"), strings.Join(want, "\n"))
	}
}

// TestFooterHintsFromKeys: the status line and the mode line show the
// hints of the table.
func TestFooterHintsFromKeys(t *testing.T) {
	h := newHarness(t, newStub(nil), nil)
	h.m.mode = approval.NewSwitch(approval.Plan)
	if got := strings.Join(h.m.modeLine(), ""); !strings.Contains(got, keyHint("Shift+Tab")) {
		t.Errorf("plan mode's line %q lacks %q", got, keyHint("Shift+Tab"))
	}
	h.m.beginOp(opRun, "Thinking")
	if got := h.m.statusLine(); !strings.Contains(got, keyHint("Esc")) {
		t.Errorf("status line %q lacks %q", got, keyHint("Esc"))
	}
}

// TestEscEscOpensRewind: as in Claude Code, Esc twice on an idle empty
// prompt lists the turns to rewind to; Esc then cancels the list; a
// single Esc, or Esc with a draft, does not.
func TestEscEscOpensRewind(t *testing.T) {
	h := newHarness(t, newStub(nil), nil)
	h.m.rewinder = &fakeRewinder{}
	h.press(keyEsc)
	if h.m.notice != keyHint("Esc Esc") || h.m.rewind != nil {
		t.Fatalf("after one Esc: notice %q, rewind %+v", h.m.notice, h.m.rewind)
	}
	h.typeText("x") // another key closes the window
	h.press(keyEsc)
	if h.m.rewind != nil {
		t.Fatal("Esc with a draft opened the rewind list")
	}
	h.m.input.Reset()
	h.press(keyEsc)
	h.press(keyEsc)
	h.until("the list of turns", h.printedLine("second prompt"))
	if h.m.rewind == nil || !h.m.rewind.choosing {
		t.Fatalf("Esc Esc left no rewind choice: %+v", h.m.rewind)
	}
	h.press(keyEsc)
	h.until("the cancel", h.printedLine("Rewind cancelled; nothing changed."))
	if h.m.rewind != nil {
		t.Fatal("Esc did not cancel the list")
	}
}

// infoHost answers the info commands with what it was asked.
type infoHost struct{ Host }

func (infoHost) Info(name string) []string { return []string{"info of " + name} }

// TestInfoCommands: /agents, /todos, /mcp, /hooks and /permissions ask
// the host and show its answer; an argument is refused.
func TestInfoCommands(t *testing.T) {
	h := newHarness(t, newStub(nil), nil)
	h.m.host = infoHost{}
	for name := range infoCommands {
		h.typeText("/" + name)
		h.m.menuState.items = nil // Enter submits what was typed
		h.press(keyEnter)
		h.until("/"+name+"'s answer", h.printedLine("info of "+name))
	}
	if c := parseCommand("/mcp list", nil); c.kind != cmdInvalid {
		t.Fatalf("/mcp list = %+v", c)
	}
}
