package ui

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/tiny-agent/tiny-go/internal/mcp"
)

// kindsForm is a form of every field kind, as a server sends it.
func kindsForm(t *testing.T) mcp.Form {
	t.Helper()
	f, err := mcp.ParseForm("ts", "Set up the project", []byte(`{"type":"object","properties":{
		"name":{"type":"string","title":"Project name","minLength":2,"maxLength":20,"default":"demo"},
		"email":{"type":"string","title":"Owner email","format":"email"},
		"replicas":{"type":"integer","title":"Replicas","minimum":1,"maximum":9,"default":3},
		"public":{"type":"boolean","title":"Public","default":false},
		"region":{"type":"string","title":"Region","oneOf":[{"const":"eu","title":"Europe"},{"const":"us","title":"United States"}],"default":"eu"},
		"tier":{"type":"string","title":"Tier","enum":["free","pro","team"]},
		"features":{"type":"array","title":"Features","items":{"type":"string","enum":["ci","docs","lint"]},"default":["ci"],"maxItems":2}},
		"required":["name","email","tier"]}`))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func formKeys(fm *formModel, keys ...any) formResult {
	var res formResult
	for _, k := range keys {
		switch k := k.(type) {
		case string:
			for _, r := range k {
				res, _ = fm.key(tea.KeyPressMsg{Code: r, Text: string(r)})
			}
		case tea.KeyPressMsg:
			res, _ = fm.key(k)
		}
		if res.done {
			return res
		}
	}
	return res
}

var (
	keyTab   = tea.KeyPressMsg{Code: tea.KeyTab}
	keyRight = tea.KeyPressMsg{Code: tea.KeyRight}
	keyLeft  = tea.KeyPressMsg{Code: tea.KeyLeft}
	keySpace = tea.KeyPressMsg{Code: tea.KeySpace, Text: " "}
	keyBack  = tea.KeyPressMsg{Code: tea.KeyBackspace}
	keyCtrlS = tea.KeyPressMsg{Code: 's', Mod: tea.ModCtrl}
	keyCtrlD = tea.KeyPressMsg{Code: 'd', Mod: tea.ModCtrl}
	keyShTab = tea.KeyPressMsg{Code: tea.KeyTab, Mod: tea.ModShift}
)

func formText(fm *formModel) string {
	lines, _ := fm.view(100, 40)
	return ansi.Strip(strings.Join(lines, "\n"))
}

// Fields are filled in and edited by kind; a required field left empty
// and a value out of range stop the send with one line under the field;
// once fixed, the answer holds typed values.
func TestFormFillIn(t *testing.T) {
	fm := newFormModel(kindsForm(t))
	view := formText(fm)
	for _, want := range []string{"› Project name *  demo", "Project name *", "(•) Europe  ( ) United States", "[x] ci  [ ] docs  [ ] lint", "( ) free  ( ) pro  ( ) team", "( ) yes  (•) no", formKeyHelp} {
		if !strings.Contains(view, want) {
			t.Errorf("view lacks %q:\n%s", want, view)
		}
	}
	if res := formKeys(fm, keyCtrlS); res.done {
		t.Fatal("sent with required fields empty")
	}
	view = formText(fm)
	if !strings.Contains(view, "✗ Owner email: required") || !strings.Contains(view, "✗ Tier: required") || !strings.Contains(view, "› Owner email *") {
		t.Fatalf("errors not shown, or the focus not on the first:\n%s", view)
	}
	res := formKeys(fm, "ada@example.com", keyTab,
		keyBack, "12", keyTab, // replicas: out of range
		"y", keyTab, // public
		keyLeft, keyTab, // region: round to United States
		keyRight, keyRight, keyTab, // tier: pro
		keyRight, keySpace, keyEnter) // features: docs too; Enter on the last field sends
	if res.done {
		t.Fatal("sent with replicas out of range")
	}
	if view = formText(fm); !strings.Contains(view, "✗ Replicas: at most 9") || !strings.Contains(view, "› Replicas") {
		t.Fatalf("range error:\n%s", view)
	}
	res = formKeys(fm, keyShTab, keyShTab, keyBack, keyBack, keyBack, keyBack, "tiny", keyTab, keyTab, keyBack, keyCtrlS)
	want := map[string]any{"email": "ada@example.com", "features": []string{"ci", "docs"}, "name": "tiny", "public": true, "region": "us", "replicas": int64(1), "tier": "pro"}
	if !res.done || res.answer.Action != mcp.ElicitAccept || !reflect.DeepEqual(res.answer.Content, want) {
		t.Fatalf("answer %+v, want %v", res.answer, want)
	}
}

func TestFormDeclineCancel(t *testing.T) {
	for _, tt := range []struct {
		key  tea.KeyPressMsg
		want string
	}{{keyCtrlD, mcp.ElicitDecline}, {keyEsc, mcp.ElicitCancel}} {
		fm := newFormModel(kindsForm(t))
		res := formKeys(fm, "x", keyShTab, tt.key)
		if !res.done || res.answer.Action != tt.want || res.answer.Content != nil {
			t.Errorf("%s: %+v", tt.key, res)
		}
	}
	// A form of defaults only is sent as it is.
	f, _ := mcp.ParseForm("s", "m", []byte(`{"properties":{"n":{"type":"integer","default":36}}}`))
	if res := formKeys(newFormModel(f), keyEnter); !res.done || res.answer.Content["n"] != int64(36) {
		t.Errorf("defaults: %+v", res)
	}
}

// In the model: forms from two servers wait their turn, the form takes
// the input box's place (the draft is kept), the answer goes back to the
// asker and is said in the scrollback, and a form the server withdraws
// leaves the screen.
func TestFormsInTheModel(t *testing.T) {
	obs := NewObserver("")
	h := newHarness(t, newStub(nil), obs)
	h.typeText("draft")
	ask := func(f mcp.Form, ctx context.Context) <-chan mcp.ElicitAnswer {
		ch := make(chan mcp.ElicitAnswer, 1)
		go func() {
			a, _ := obs.AskForm(ctx, f)
			ch <- a
		}()
		return ch
	}
	one, _ := mcp.ParseForm("one", "Your name?", []byte(`{"properties":{"name":{"type":"string","default":"Ada"}}}`))
	two, _ := mcp.ParseForm("two", "Sure?\n\x1b[31mReally\x1b[0m sure?", []byte(`{"properties":{"ok":{"type":"boolean"}}}`))
	ctx, withdraw := context.WithCancel(context.Background())
	defer withdraw()
	first := ask(one, context.Background())
	h.until("the first form", h.printedLine("◆ MCP one asks: Your name?"))
	second := ask(two, ctx)
	h.until("the second form queued", func() bool { return len(h.m.forms) == 2 })
	if v := ansi.Strip(h.m.View().Content); !strings.Contains(v, "› name  Ada") || strings.Contains(v, "draft") || strings.Contains(v, "ok") {
		t.Fatalf("view:\n%s", v)
	}
	h.typeText("!")
	h.press(keyEnter)
	if a := <-first; a.Action != mcp.ElicitAccept || a.Content["name"] != "Ada!" {
		t.Fatalf("first answer %+v", a)
	}
	h.until("the summary", h.printedLine("  └ sent name=Ada!"))
	h.until("the second form", h.printedLine("◆ MCP two asks: Sure?"))
	if !strings.Contains(h.output(), "\n  Really sure?") {
		t.Errorf("the message's second line:\n%q", h.output())
	}
	withdraw()
	if a := <-second; a.Action != mcp.ElicitCancel {
		t.Fatalf("second answer %+v", a)
	}
	h.until("the withdrawal", h.printedLine("  └ withdrawn by the server"))
	if v := ansi.Strip(h.m.View().Content); len(h.m.forms) != 0 || !strings.Contains(v, "draft") {
		t.Fatalf("after the forms:\n%s", v)
	}
}

// A form taller than its room shows the fields around the focused one,
// and says how many are above and below; no line is wider than the
// screen.
func TestFormWindow(t *testing.T) {
	var props []string
	for i := range 20 {
		props = append(props, fmt.Sprintf(`"f%02d":{"type":"string","title":"Field %d with a rather long title"}`, i, i))
	}
	f, err := mcp.ParseForm("s", "m", []byte(`{"properties":{`+strings.Join(props, ",")+`}}`))
	if err != nil {
		t.Fatal(err)
	}
	fm := newFormModel(f)
	for range 10 {
		fm.key(keyTab)
	}
	lines, cur := fm.view(40, 8)
	text := ansi.Strip(strings.Join(lines, "\n"))
	if len(lines) != 8 || !strings.Contains(text, "↑ ") || !strings.Contains(text, "↓ ") || cur == nil || !strings.HasPrefix(ansi.Strip(lines[cur.Y]), "› Field 10") {
		t.Fatalf("%d lines, cursor %+v:\n%s", len(lines), cur, text)
	}
	for _, l := range lines {
		if w := ansi.StringWidth(l); w > 40 {
			t.Errorf("a line %d wide: %q", w, l)
		}
	}
}

// A choice list too long for the screen shows the chosen option alone,
// with where it is in the list.
func TestFormLongChoice(t *testing.T) {
	var opts []string
	for i := range 30 {
		opts = append(opts, fmt.Sprintf(`{"const":"c%d","title":"Country %d"}`, i, i))
	}
	f, err := mcp.ParseForm("s", "m", []byte(`{"properties":{"c":{"type":"string","oneOf":[`+strings.Join(opts, ",")+`],"default":"c4"},
		"m":{"type":"array","items":{"anyOf":[`+strings.Join(opts, ",")+`]}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	fm := newFormModel(f)
	formKeys(fm, keyRight)
	if v := formText(fm); !strings.Contains(v, "‹ (•) Country 5 › 6/30") {
		t.Fatalf("view:\n%s", v)
	}
	res := formKeys(fm, keyTab, keyLeft, keySpace, keyCtrlS)
	if v := formText(fm); !strings.Contains(v, "‹ [x] Country 29 › 30/30 · 1 picked") {
		t.Errorf("view:\n%s", v)
	}
	if !res.done || res.answer.Content["c"] != "c5" || !reflect.DeepEqual(res.answer.Content["m"], []string{"c29"}) {
		t.Errorf("answer %+v", res.answer)
	}
}
