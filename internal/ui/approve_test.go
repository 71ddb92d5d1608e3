package ui

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/approval"
	"github.com/tiny-agent/tiny-go/internal/session"
)

var testPrompt = approval.Prompt{Tool: "bash", Action: "Run a command", Detail: []string{"rm -rf build\x1b[2J"}, Always: "`rm` commands"}

// askingEngine asks one approval question per Run, through the observer,
// as the agent's Approve hook does, and reports the answer as the reply.
type askingEngine struct {
	obs    *Observer
	mu     sync.Mutex
	cancel context.CancelFunc
	aborts int
}

func (e *askingEngine) Run(ctx context.Context, prompt string) (agent.Result, error) {
	ctx, cancel := context.WithCancel(ctx)
	e.mu.Lock()
	e.cancel = cancel
	e.mu.Unlock()
	e.obs.Event(agent.OperationStarted{OperationID: "op", Kind: session.OperationRun})
	ans, err := e.obs.Ask(ctx, testPrompt)
	if err != nil {
		return agent.Result{Outcome: session.OutcomeAborted, Kind: session.OperationRun}, nil
	}
	answer := map[approval.Choice]string{approval.Once: "once", approval.Always: "always", approval.Deny: "deny:" + ans.Reason}[ans.Choice]
	return agent.Result{Outcome: session.OutcomeCompleted, Answer: "answer=" + answer}, nil
}

func (e *askingEngine) Compact(context.Context) (agent.Result, agent.CompactStats, error) {
	return agent.Result{}, agent.CompactStats{}, agent.ErrNothingToCompact
}

func (e *askingEngine) Abort(context.Context) (bool, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.aborts++
	if e.cancel != nil {
		e.cancel()
	}
	return true, nil
}

func TestLineModeApprovals(t *testing.T) {
	obs := NewObserver("")
	eng := &askingEngine{obs: obs}
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer inR.Close()
	out := &syncBuffer{}
	done := make(chan error, 1)
	go func() { done <- RunLines(context.Background(), Options{In: inR, Out: out, Engine: eng, Observer: obs}) }()
	waitOut := func(s string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !strings.Contains(out.String(), s) {
			if time.Now().After(deadline) {
				t.Fatalf("output lacks %q:\n%s", s, out.String())
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	question := "◆ bash wants to: Run a command\n    rm -rf build\nAllow? y = once, a = always allow `rm` commands, n [reason] = deny, esc = abort: "
	io.WriteString(inW, "first\n")
	waitOut(question)
	io.WriteString(inW, "maybe\n")
	waitOut("Answer y, a, n [reason] or esc.\n")
	io.WriteString(inW, "n   too risky \n")
	waitOut("answer=deny:too risky\n")
	io.WriteString(inW, "second\ny\n")
	waitOut("answer=once\n")
	io.WriteString(inW, "third\nalways\n")
	waitOut("answer=always\n")
	io.WriteString(inW, "fourth\nesc\n")
	waitOut("Aborted.")
	io.WriteString(inW, "fifth\n")
	waitOut(question)
	inW.Close() // EOF while waiting: abort and exit
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("RunLines did not return on EOF")
	}
	if eng.aborts != 2 {
		t.Fatalf("%d aborts, want 2 (esc, EOF)", eng.aborts)
	}
}

func TestAskLine(t *testing.T) {
	var out strings.Builder
	ctx := context.Background()
	a, err := AskLine(ctx, strings.NewReader("what\nn  no thanks\n"), &out, testPrompt)
	if err != nil || a.Choice != approval.Deny || a.Reason != "no thanks" {
		t.Fatalf("= %+v, %v", a, err)
	}
	if !strings.Contains(out.String(), "Answer y, a, n [reason] or esc: ") || strings.Contains(out.String(), "\x1b") {
		t.Fatalf("output %q", out.String())
	}
	noAlways := testPrompt
	noAlways.Always = ""
	if a, err := AskLine(ctx, strings.NewReader("a\n"), io.Discard, noAlways); err != nil || a.Choice != approval.Once {
		t.Fatalf("a without always = %+v, %v", a, err)
	}
	if _, err := AskLine(ctx, strings.NewReader("\x1b\n"), io.Discard, testPrompt); !errors.Is(err, ErrAborted) {
		t.Fatalf("Esc = %v", err)
	}
	if _, err := AskLine(ctx, strings.NewReader(""), io.Discard, testPrompt); err == nil || !errors.Is(err, io.EOF) {
		t.Fatalf("EOF = %v", err)
	}

	// An abort ends the wait on a pipe at once and leaves what follows to
	// the next reader.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	cctx, cancel := context.WithCancel(ctx)
	errc := make(chan error, 1)
	go func() { _, err := AskLine(cctx, r, io.Discard, testPrompt); errc <- err }()
	time.Sleep(50 * time.Millisecond)
	cancel()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled AskLine = %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("AskLine did not return on cancel")
	}
	io.WriteString(w, "the next prompt\n")
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil || line != "the next prompt\n" {
		t.Fatalf("next reader got %q, %v", line, err)
	}
}

func TestTerminalApprovalKeys(t *testing.T) {
	obs := NewObserver("")
	eng := &askingEngine{obs: obs}
	h := newHarness(t, eng, obs)
	h.typeText("go")
	h.press(tea.KeyPressMsg{Code: tea.KeyEnter})
	h.until("the question", h.printedLine("◆ bash wants to: Run a command"))
	if h.m.approval == nil || strings.Contains(h.output(), "\x1b[2J") {
		t.Fatalf("scrollback:\n%q", h.output())
	}
	h.press(tea.KeyPressMsg{Code: 'x', Text: "x"}) // ignored
	h.press(tea.KeyPressMsg{Code: 'n', Text: "n"})
	h.typeText("nope")
	h.press(tea.KeyPressMsg{Code: tea.KeyEnter})
	h.until("the answer", h.printedLine("answer=deny:nope"))
	if strings.Contains(h.output(), "└ denied") {
		t.Fatalf("the question echoes the denial (the tool log says it):\n%s", h.output())
	}
	if v := h.m.input.Value(); v != "" {
		t.Fatalf("input holds %q after the reason", v)
	}

	// Esc while typing a reason aborts.
	h.typeText("go")
	h.press(tea.KeyPressMsg{Code: tea.KeyEnter})
	h.until("the question", func() bool { return h.m.approval != nil })
	h.press(tea.KeyPressMsg{Code: 'n', Text: "n"})
	h.typeText("hm")
	h.press(tea.KeyPressMsg{Code: tea.KeyEscape})
	h.until("the abort", h.printedLine("Aborted."))
	if h.m.approval != nil || eng.aborts != 1 {
		t.Fatalf("after Esc: approval %v, %d aborts", h.m.approval, eng.aborts)
	}
}

// At 80 columns every choice of the question stays visible, "Esc abort"
// included, however long the "always" choice is.
func TestApprovalChoicesAreNeverCut(t *testing.T) {
	p := approval.Prompt{Tool: "mcp:filesystem/write_text_file", Always: "`mcp:filesystem/write_text_file` calls with any arguments"}
	for _, width := range []int{80, 40} {
		lines := choiceLines("Allow "+p.Tool+"? ", promptChoices(p), width)
		got := stripANSI(strings.Join(lines, "\n"))
		for _, want := range []string{"y allow once", "a always allow", "n deny", "Esc abort"} {
			if !strings.Contains(got, want) {
				t.Errorf("width %d: lacks %q:\n%s", width, want, got)
			}
		}
		for _, l := range lines {
			if w := len([]rune(stripANSI(l))); w > width {
				t.Errorf("width %d: line of %d: %q", width, w, stripANSI(l))
			}
		}
	}
	if lines := choiceLines("Allow bash? ", "y allow once · n deny · Esc abort", 80); len(lines) != 1 {
		t.Fatalf("a short question takes %d lines", len(lines))
	}
}

// A diff shown in the approval question is not shown again when the call
// has run; its counts are.
func TestApprovedDiffIsShownOnce(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(dir+"/a.txt", []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	l := &toolLog{workDir: dir}
	info := agent.ToolInfo{Tool: "write", ExecutionID: "e1", Arguments: `{"path":"a.txt","content":"new\n"}`}
	l.shownInQuestion()
	l.started(info)
	r := l.report(info, agent.ToolOutcome{Outcome: "succeeded", Content: "ok"})
	if r.summary != "ok +1 -1" || len(r.diff) != 0 {
		t.Fatalf("after the question: %q, diff %q", r.summary, r.diff)
	}
	info.ExecutionID = "e2"
	l.started(info) // not asked (auto mode): the log shows the diff
	if r := l.report(info, agent.ToolOutcome{Outcome: "succeeded", Content: "ok"}); len(r.diff) == 0 {
		t.Fatal("without a question the diff is not shown")
	}
}

// The question keeps its first choice beside it when the choices wrap.
func TestApprovalChoicesWrapAfterTheQuestion(t *testing.T) {
	p := approval.Prompt{Tool: "write", Always: "writes to any file in this directory"}
	lines := choiceLines("Allow write? ", promptChoices(p), 60)
	if len(lines) < 2 || !strings.HasPrefix(stripANSI(lines[0]), "Allow write? y allow once") {
		t.Fatalf("%q", lines)
	}
	for _, l := range lines {
		t.Log(stripANSI(l))
	}
}
