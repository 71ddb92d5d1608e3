package ui

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/interrupt"
	"github.com/tiny-agent/tiny-go/internal/session"
)

func startedRun(t *testing.T) (*harness, *stubEngine) {
	t.Helper()
	obs := NewObserver("")
	eng := newStub(obs)
	h := newHarness(t, eng, obs)
	h.typeText("hello")
	h.press(keyEnter)
	h.until("the run to be accepted", func() bool { return h.m.opSeq == 1 })
	return h, eng
}

func TestBannerIsPrintedFirst(t *testing.T) {
	h := newHarness(t, newStub(nil), nil)
	h.until("the banner", h.printedLine(helpCommands))
	out := stripANSI(h.output())
	for _, want := range []string{"session id: sess-1", helpKeys, helpCommands} {
		if !strings.Contains(out, want) {
			t.Errorf("banner lacks %q:\n%s", want, out)
		}
	}
}

func TestEnterSendsThePrompt(t *testing.T) {
	h, eng := startedRun(t)
	if got := eng.promptsSeen(); len(got) != 1 || got[0] != "hello" {
		t.Fatalf("prompts = %q, want [hello]", got)
	}
	if v := h.m.input.Value(); v != "" {
		t.Errorf("input after Enter = %q, want it cleared", v)
	}
	h.until("the echo", h.printedLine("> hello"))
}

func TestEscWhileActiveAbortsOnce(t *testing.T) {
	h, eng := startedRun(t)
	h.press(keyEsc)
	h.press(keyEsc) // a second Esc is harmless
	h.until("the run to end", func() bool { return h.m.op == opNone })
	h.settle(50 * time.Millisecond)
	if aborts, calls := eng.counts(); aborts != 1 || calls != 1 {
		t.Errorf("Abort: %d aborted of %d calls, want 1 of 1", aborts, calls)
	}
	h.until("the outcome", h.printedLine("Aborted."))
	if h.quit {
		t.Error("Esc quit the program")
	}
}

func TestEscWhileIdleDoesNothing(t *testing.T) {
	eng := newStub(nil)
	h := newHarness(t, eng, nil)
	h.typeText("draft")
	h.press(keyEsc)
	h.settle(50 * time.Millisecond)
	if _, calls := eng.counts(); calls != 0 {
		t.Errorf("Abort called %d times with nothing active", calls)
	}
	if v := h.m.input.Value(); v != "draft" {
		t.Errorf("input = %q, want the draft kept", v)
	}
	if h.quit {
		t.Error("Esc quit the program")
	}
}

func TestArrowAndOtherKeysNeverAbort(t *testing.T) {
	h, eng := startedRun(t)
	for _, k := range []tea.KeyPressMsg{
		keyUp, keyDown,
		{Code: tea.KeyLeft}, {Code: tea.KeyRight},
		{Code: tea.KeyLeft, Mod: tea.ModAlt}, {Code: tea.KeyRight, Mod: tea.ModCtrl},
		{Code: tea.KeyHome}, {Code: tea.KeyEnd}, {Code: tea.KeyPgUp}, {Code: tea.KeyF5},
		{Code: '[', Mod: tea.ModAlt}, {Code: tea.KeyEscape, Mod: tea.ModShift},
	} {
		h.press(k)
	}
	h.settle(50 * time.Millisecond)
	if _, calls := eng.counts(); calls != 0 {
		t.Errorf("Abort called %d times by non-Esc keys", calls)
	}
	if h.m.op == opNone || h.m.aborting {
		t.Error("the run is no longer active")
	}
	eng.finish <- agent.Result{Outcome: session.OutcomeCompleted, Answer: "done"}
	h.until("the run to end", func() bool { return h.m.op == opNone })
}

// An Esc before the agent accepted the prompt must still abort it.
func TestEscBeforeTheOperationStartedAbortsIt(t *testing.T) {
	obs := NewObserver("")
	eng := newStub(obs)
	eng.withhold = true
	h := newHarness(t, eng, obs)
	h.typeText("hello")
	h.press(keyEnter)
	h.until("Run to be called", func() bool { return len(eng.promptsSeen()) == 1 })
	h.press(keyEsc)
	h.until("the first abort to return", func() bool {
		_, calls := eng.counts()
		return calls == 1 && !h.m.abortInFlight
	})
	eng.acceptNow()
	h.until("the run to end", func() bool { return h.m.op == opNone })
	if aborts, calls := eng.counts(); aborts != 1 || calls != 2 {
		t.Errorf("Abort: %d aborted of %d calls, want 1 of 2", aborts, calls)
	}
	h.until("the outcome", h.printedLine("Aborted."))
}

func TestAltEnterAndCtrlJInsertNewlines(t *testing.T) {
	eng := newStub(nil)
	h := newHarness(t, eng, nil)
	h.typeText("a")
	h.press(keyAltEnter)
	h.typeText("b")
	h.press(keyCtrlJ)
	h.typeText("c")
	if v := h.m.input.Value(); v != "a\nb\nc" {
		t.Fatalf("input = %q, want %q", v, "a\nb\nc")
	}
	if n := len(eng.promptsSeen()); n != 0 {
		t.Fatalf("a newline key sent the prompt")
	}
	h.press(keyEnter)
	h.until("Run", func() bool { return len(eng.promptsSeen()) == 1 })
	if p := eng.promptsSeen()[0]; p != "a\nb\nc" {
		t.Errorf("prompt = %q", p)
	}
}

func TestPasteKeepsNewlines(t *testing.T) {
	h := newHarness(t, newStub(nil), nil)
	h.send(tea.PasteMsg{Content: "one\r\ntwo\rthree\nfour"})
	if v := h.m.input.Value(); v != "one\ntwo\nthree\nfour" {
		t.Errorf("input = %q", v)
	}
}

func TestCtrlCWhileActiveAbortsThenQuits(t *testing.T) {
	h, eng := startedRun(t)
	h.press(keyCtrlC)
	h.until("quit", func() bool { return h.quit })
	if aborts, _ := eng.counts(); aborts != 1 {
		t.Errorf("aborts = %d, want 1", aborts)
	}
	if eng.isRunning() {
		t.Error("quit before the run had ended")
	}
	if !strings.Contains(stripANSI(h.output()), "Aborted.") {
		t.Errorf("no outcome before quitting:\n%s", h.output())
	}
}

func TestSecondCtrlCStopsAnOperationThatDoesNotEnd(t *testing.T) {
	h, eng := startedRun(t)
	eng.mu.Lock()
	eng.ignoreAbort = true
	eng.mu.Unlock()
	h.press(keyCtrlC)
	h.until("the abort", func() bool { a, _ := eng.counts(); return a == 1 })
	h.settle(50 * time.Millisecond)
	if h.quit {
		t.Fatal("quit while the operation was still running")
	}
	h.send(toolDoneMsg{info: agent.ToolInfo{Tool: "bash"}, outcome: agent.ToolOutcome{Outcome: "cancelled"}})
	if v := stripANSI(h.m.View().Content); !strings.Contains(v, "Aborting…") {
		t.Errorf("status line after the abort:\n%s", v)
	}
	// Within the grace another Ctrl+C only says how to force.
	h.press(keyCtrlC)
	h.settle(50 * time.Millisecond)
	if h.quit || !strings.Contains(stripANSI(h.m.View().Content), "Ctrl+C again to stop at once") {
		t.Fatalf("a second Ctrl+C within the grace:\n%s", stripANSI(h.m.View().Content))
	}
	later := time.Now().Add(interrupt.Grace)
	h.m.now = func() time.Time { return later }
	h.press(keyCtrlC)
	h.until("quit", func() bool { return h.quit })
	if eng.isRunning() {
		t.Error("quit before the run had returned")
	}
	h.until("the outcome", h.printedLine("Stopped."))
}

// TestCtrlCWhileIdle: Ctrl+C clears a draft (Up brings it back); on an
// empty prompt the first asks, a second within the window exits, one
// after the window asks again.
func TestCtrlCWhileIdle(t *testing.T) {
	eng := newStub(nil)
	h := newHarness(t, eng, nil)
	now := time.Unix(1000, 0)
	h.m.now = func() time.Time { return now }
	h.typeText("half a thought")
	h.press(keyCtrlC)
	if v := h.m.input.Value(); v != "" || h.quit {
		t.Fatalf("after Ctrl+C the input is %q (quit %v)", v, h.quit)
	}
	h.press(tea.KeyPressMsg{Code: tea.KeyUp})
	if v := h.m.input.Value(); v != "half a thought" {
		t.Fatalf("Up brought back %q", v)
	}
	h.press(keyCtrlC) // clears it again
	h.press(keyCtrlC)
	if h.m.notice != ctrlCAgain {
		t.Fatalf("notice %q", h.m.notice)
	}
	now = now.Add(ctrlCWindow + time.Millisecond)
	h.press(keyCtrlC) // too late: asks again
	h.settle(50 * time.Millisecond)
	if h.quit || h.m.quitting {
		t.Fatal("a Ctrl+C after the window exited")
	}
	now = now.Add(time.Second)
	h.press(keyCtrlC)
	h.until("quit", func() bool { return h.quit })
	if _, calls := eng.counts(); calls != 0 {
		t.Errorf("Abort called %d times", calls)
	}
}

func TestExitCommandQuits(t *testing.T) {
	h := newHarness(t, newStub(nil), nil)
	h.typeText("/exit")
	h.press(keyEnter)
	h.until("quit", func() bool { return h.quit })
}

func TestEnterWhileBusyKeepsTheInput(t *testing.T) {
	h, eng := startedRun(t)
	h.typeText("next")
	h.press(keyEnter)
	if n := len(eng.promptsSeen()); n != 1 {
		t.Errorf("prompts = %d, want 1", n)
	}
	if v := h.m.input.Value(); v != "next" {
		t.Errorf("input = %q, want it kept", v)
	}
	if !strings.Contains(h.m.notice, "Esc aborts") {
		t.Errorf("notice = %q", h.m.notice)
	}
}

func TestHistory(t *testing.T) {
	obs := NewObserver("")
	eng := newStub(obs)
	h := newHarness(t, eng, obs)
	for _, p := range []string{"one", "two"} {
		h.typeText(p)
		h.press(keyEnter)
		h.until("the run", func() bool { return h.m.op == opRun })
		eng.finish <- agent.Result{Outcome: session.OutcomeCompleted, Answer: p}
		h.until("the run to end", func() bool { return h.m.op == opNone })
	}
	h.typeText("dra")
	steps := []struct {
		key  tea.KeyPressMsg
		want string
	}{
		{keyUp, "two"}, {keyUp, "one"}, {keyUp, "one"}, {keyDown, "two"}, {keyDown, "dra"},
	}
	for i, s := range steps {
		h.press(s.key)
		if v := h.m.input.Value(); v != s.want {
			t.Fatalf("step %d: input = %q, want %q", i, v, s.want)
		}
	}
}

func TestUpInsideMultilineInputMovesTheCursor(t *testing.T) {
	obs := NewObserver("")
	eng := newStub(obs)
	h := newHarness(t, eng, obs)
	h.typeText("old")
	h.press(keyEnter)
	h.until("the run", func() bool { return h.m.op == opRun })
	eng.finish <- agent.Result{Outcome: session.OutcomeCompleted}
	h.until("the run to end", func() bool { return h.m.op == opNone })

	h.typeText("a")
	h.press(keyAltEnter)
	h.typeText("b")
	h.press(keyUp) // to the first line, not into the history
	if v, l := h.m.input.Value(), h.m.input.Line(); v != "a\nb" || l != 0 {
		t.Fatalf("after Up: input %q line %d", v, l)
	}
	h.press(keyUp) // now the history
	if v := h.m.input.Value(); v != "old" {
		t.Fatalf("after second Up: input %q, want old", v)
	}
}

func TestStreamingThenMarkdown(t *testing.T) {
	h, eng := startedRun(t)
	h.send(modelStartedMsg{})
	h.send(deltaMsg{text: "Some **bold** "})
	if v := stripANSI(h.m.View().Content); !strings.Contains(v, "Some bold") {
		t.Errorf("live view lacks the stream:\n%s", v)
	}
	h.send(deltaMsg{text: "text"})
	u := session.Usage{Input: 10, Output: 5, CacheRead: 90}
	h.send(modelDoneMsg{outcome: agent.ModelOutcome{Outcome: "succeeded", Usage: &u}})
	h.send(opDoneMsg{outcome: agent.OperationOutcome{Usage: u}})
	eng.finish <- agent.Result{Outcome: session.OutcomeCompleted, Answer: "Some **bold** text"}
	h.until("the run to end", func() bool { return h.m.op == opNone })
	h.until("output", func() bool { return len(h.m.outbox) == 0 && !h.m.printing })
	out := stripANSI(h.output())
	if !strings.Contains(out, "Some bold text") || strings.Contains(out, "**") {
		t.Errorf("the reply was not rendered as markdown:\n%s", out)
	}
	if strings.Count(out, "Some bold text") != 1 {
		t.Errorf("the reply was printed more than once:\n%s", out)
	}
	if !strings.Contains(out, "100 in · 5 out · 90% cached") {
		t.Errorf("no usage line:\n%s", out)
	}
	if v := stripANSI(h.m.View().Content); strings.Contains(v, "bold") {
		t.Errorf("the stream is still in the live view:\n%s", v)
	}
}

func TestAnswerWithoutStreamingIsPrinted(t *testing.T) {
	h, eng := startedRun(t)
	eng.finish <- agent.Result{Outcome: session.OutcomeCompleted, Answer: "quiet answer"}
	h.until("the answer", h.printedLine("quiet answer"))
}

func TestToolLines(t *testing.T) {
	h, _ := startedRun(t)
	info := agent.ToolInfo{Tool: "bash", Display: "bash", Arguments: `{"command":"go test ./..."}`}
	h.send(toolStartedMsg{info: info})
	if v := stripANSI(h.m.View().Content); !strings.Contains(v, "Running bash… 0s") {
		t.Errorf("status line missing:\n%s", v)
	}
	h.send(toolDoneMsg{info: info, outcome: agent.ToolOutcome{Outcome: "succeeded", Content: "ok\n"}})
	h.until("the tool lines", h.printedLine("  └ 3 chars"))
	if out := stripANSI(h.output()); !strings.Contains(out, "◆ bash go test ./...\n  └ 3 chars") {
		t.Errorf("tool lines:\n%s", out)
	}
}

func TestFailureAndErrorLines(t *testing.T) {
	h, eng := startedRun(t)
	eng.finish <- agent.Result{Outcome: session.OutcomeFailed, Error: &session.ErrorInfo{Code: "model_error", Message: "HTTP 500\nfrom upstream"}}
	h.until("the failure", h.printedLine("Failed: HTTP 500 from upstream"))
}

func TestCommands(t *testing.T) {
	obs := NewObserver("")
	eng := newStub(obs)
	h := newHarness(t, eng, obs)

	h.typeText("/compact")
	h.press(keyEnter)
	h.until("refusal", h.printedLine("Nothing to compact."))

	eng.compact = func() (agent.Result, agent.CompactStats, error) {
		return agent.Result{Outcome: session.OutcomeCompleted}, agent.CompactStats{Compacted: 8, Kept: 6}, nil
	}
	h.typeText("/compact")
	h.press(keyEnter)
	h.until("compaction", h.printedLine("Compacted 8 messages (kept last 6)."))

	eng.compact = func() (agent.Result, agent.CompactStats, error) {
		return agent.Result{Outcome: session.OutcomeAborted}, agent.CompactStats{Compacted: 8, Kept: 6}, nil
	}
	h.typeText("/compact")
	h.press(keyEnter)
	h.until("aborted compaction", h.printedLine("Compaction aborted."))

	h.typeText("/frobnicate now")
	h.press(keyEnter)
	h.until("unknown command", h.printedLine("Unknown command: /frobnicate"))

	h.typeText("/skill:nope do it")
	h.press(keyEnter)
	h.until("unknown skill", h.printedLine("Unknown skill: nope"))

	if n := len(eng.promptsSeen()); n != 0 {
		t.Fatalf("a command was sent as a prompt: %q", eng.promptsSeen())
	}
	h.typeText("/skill:demo do it")
	h.press(keyEnter)
	h.until("the skill run", func() bool { return len(eng.promptsSeen()) == 1 })
	if p := eng.promptsSeen()[0]; p != "DEMO SKILL\n\nUser: do it" {
		t.Errorf("skill prompt = %q", p)
	}
}

func TestRunErrorIsOneLine(t *testing.T) {
	obs := NewObserver("")
	eng := &errEngine{err: errors.New("an operation is already open\nin this session")}
	h := newHarness(t, eng, obs)
	h.typeText("x")
	h.press(keyEnter)
	h.until("the error", h.printedLine("Error: an operation is already open in this session"))
}

type errEngine struct{ err error }

func (e *errEngine) Run(context.Context, string) (agent.Result, error) { return agent.Result{}, e.err }
func (e *errEngine) Compact(context.Context) (agent.Result, agent.CompactStats, error) {
	return agent.Result{}, agent.CompactStats{}, e.err
}
func (e *errEngine) Abort(context.Context) (bool, error) { return false, nil }

func TestLiveAreaFitsTheWidth(t *testing.T) {
	h, _ := startedRun(t)
	h.send(tea.WindowSizeMsg{Width: 20, Height: 12})
	h.send(modelStartedMsg{})
	h.send(deltaMsg{text: strings.Repeat("漢字かな交じり文 e\u0301 ", 30)})
	h.typeText("入力も漢字で長く長く長く書いてみる")
	for i, line := range strings.Split(h.m.View().Content, "\n") {
		if w := ansi.StringWidth(line); w > 20 {
			t.Errorf("line %d is %d cells wide: %q", i, w, line)
		}
	}
	if n := strings.Count(h.m.View().Content, "\n") + 1; n > 12 {
		t.Errorf("live area is %d lines, taller than the terminal", n)
	}
}

var _ Engine = (*agent.Agent)(nil)

func TestPrintedReplyFitsTheWidth(t *testing.T) {
	h, eng := startedRun(t)
	h.send(tea.WindowSizeMsg{Width: 40, Height: 20})
	h.until("the echo", func() bool { return len(h.m.outbox) == 0 && !h.m.printing })
	before := len(h.printed)
	reply := "# 見出し\n\n" + strings.Repeat("長い段落の文章 with words ", 20) + "\n\n```go\n" + strings.Repeat("x", 120) + "\n```\n"
	eng.finish <- agent.Result{Outcome: session.OutcomeCompleted, Answer: reply}
	h.until("the reply", h.printedLine("見出し"))
	for _, line := range strings.Split(strings.Join(h.printed[before:], "\n"), "\n") {
		if w := ansi.StringWidth(line); w > 40 {
			t.Errorf("printed line is %d cells: %q", w, stripANSI(line))
		}
	}
}
