package ui

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/session"
)

// harness drives the model like Bubble Tea does: Update on one goroutine,
// commands on others, their messages queued back. Output handed to the
// terminal is recorded instead.
type harness struct {
	t       *testing.T
	m       *model
	msgs    chan tea.Msg
	printed []string
	quit    bool
}

type recordedPrint struct{ text string }

func newHarness(t *testing.T, eng Engine, obs *Observer) *harness {
	t.Helper()
	h := &harness{t: t, msgs: make(chan tea.Msg, 4096)}
	h.m = newModel(context.Background(), eng, Banner{SessionID: "sess-1"}, func(in string) (string, error) {
		name, text, _ := strings.Cut(strings.TrimPrefix(in, "/skill:"), " ")
		if name != "demo" {
			return "", unknownSkillError(name)
		}
		return "DEMO SKILL\n\nUser: " + text, nil
	})
	h.m.printCmd = func(text string) tea.Cmd {
		return func() tea.Msg { return recordedPrint{text} }
	}
	if obs != nil {
		t.Cleanup(obs.attach(func(msg any) { h.msgs <- msg }))
	}
	h.exec(h.m.Init())
	h.send(tea.WindowSizeMsg{Width: 80, Height: 24})
	return h
}

type unknownSkillError string

func (u unknownSkillError) Error() string { return "Unknown skill: " + string(u) }

func (h *harness) exec(cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	go func() {
		switch msg := cmd().(type) {
		case nil:
		case tea.BatchMsg:
			for _, c := range msg {
				h.exec(c)
			}
		default:
			h.msgs <- msg
		}
	}()
}

// send delivers msg to Update now.
func (h *harness) send(msg tea.Msg) {
	switch msg := msg.(type) {
	case recordedPrint:
		h.printed = append(h.printed, msg.text)
		msg2 := printedMsg{}
		h.send(msg2)
		return
	case tea.QuitMsg:
		h.quit = true
		return
	}
	_, cmd := h.m.Update(msg)
	h.exec(cmd)
}

// until processes queued messages until cond holds.
func (h *harness) until(what string, cond func() bool) {
	h.t.Helper()
	deadline := time.After(5 * time.Second)
	for !cond() {
		select {
		case msg := <-h.msgs:
			h.send(msg)
		case <-deadline:
			h.t.Fatalf("timed out waiting for %s; printed so far:\n%s", what, h.output())
		}
	}
}

// settle processes messages for d, to show that nothing more happens.
func (h *harness) settle(d time.Duration) {
	deadline := time.After(d)
	for {
		select {
		case msg := <-h.msgs:
			h.send(msg)
		case <-deadline:
			return
		}
	}
}

func (h *harness) output() string { return strings.Join(h.printed, "\n") }

func (h *harness) printedLine(s string) func() bool {
	return func() bool { return strings.Contains(stripANSI(h.output()), s) }
}

func (h *harness) typeText(s string) {
	for _, r := range s {
		h.send(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
}

func (h *harness) press(k tea.KeyPressMsg) { h.send(k) }

var (
	keyEnter    = tea.KeyPressMsg{Code: tea.KeyEnter}
	keyAltEnter = tea.KeyPressMsg{Code: tea.KeyEnter, Mod: tea.ModAlt}
	keyCtrlJ    = tea.KeyPressMsg{Code: 'j', Mod: tea.ModCtrl}
	keyEsc      = tea.KeyPressMsg{Code: tea.KeyEscape}
	keyCtrlC    = tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}
	keyCtrlR    = tea.KeyPressMsg{Code: 'r', Mod: tea.ModCtrl}
	keyUp       = tea.KeyPressMsg{Code: tea.KeyUp}
	keyDown     = tea.KeyPressMsg{Code: tea.KeyDown}
)

// stubEngine is an Engine whose operations last until the test ends them
// or they are aborted.
type stubEngine struct {
	obs *Observer

	mu      sync.Mutex
	prompts []string
	accept  bool // Run has "committed" its operation: Abort can find it
	aborts  int  // Abort calls that aborted something
	calls   int  // all Abort calls
	running bool
	durable bool // an abort is "committed" for the running operation
	ended   int
	// ignoreAbort makes Abort succeed without ending the operation.
	ignoreAbort bool
	// withhold keeps the operation unaccepted until acceptNow.
	withhold bool
	aborted  chan struct{}
	finish   chan agent.Result
	compact  func() (agent.Result, agent.CompactStats, error)
}

func stripANSI(s string) string { return ansi.Strip(s) }

func newStub(obs *Observer) *stubEngine {
	return &stubEngine{obs: obs, finish: make(chan agent.Result, 1)}
}

func (s *stubEngine) Run(ctx context.Context, prompt string) (agent.Result, error) {
	s.mu.Lock()
	s.prompts = append(s.prompts, prompt)
	s.running, s.durable, s.aborted = true, false, make(chan struct{})
	aborted := s.aborted
	withhold := s.withhold
	if !withhold {
		s.accept = true
	}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.running, s.accept = false, false
		s.ended++
		s.mu.Unlock()
	}()
	if !withhold {
		s.obs.Event(agent.OperationStarted{OperationID: "op", Kind: session.OperationRun})
	}
	select {
	case res := <-s.finish:
		s.obs.Event(agent.OperationCompleted{Result: res})
		return res, nil
	case <-aborted:
		res := agent.Result{Outcome: session.OutcomeAborted}
		s.obs.Event(agent.OperationCompleted{Result: res})
		return res, nil
	case <-ctx.Done():
		return agent.Result{}, ctx.Err()
	}
}

// acceptNow commits a withheld operation.
func (s *stubEngine) acceptNow() {
	s.mu.Lock()
	s.accept = true
	s.mu.Unlock()
	s.obs.Event(agent.OperationStarted{OperationID: "op", Kind: session.OperationRun})
}

func (s *stubEngine) Compact(ctx context.Context) (agent.Result, agent.CompactStats, error) {
	if s.compact != nil {
		return s.compact()
	}
	return agent.Result{}, agent.CompactStats{}, agent.ErrNothingToCompact
}

func (s *stubEngine) Abort(context.Context) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	if !s.accept || !s.running || s.durable {
		return false, nil
	}
	s.durable = true
	s.aborts++
	if !s.ignoreAbort {
		close(s.aborted)
	}
	return true, nil
}

func (s *stubEngine) counts() (aborts, calls int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.aborts, s.calls
}

func (s *stubEngine) promptsSeen() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.prompts...)
}

func (s *stubEngine) isRunning() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.running
}
