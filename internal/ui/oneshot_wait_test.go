package ui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/session"
	"github.com/tiny-agent/tiny-go/internal/testenv"
)

// On a stderr that is not a terminal a model request that brings nothing
// back is reported every WaitEvery ("waiting for the model: ..."), and
// the lines stop once the reply streams.
func TestOneShotReportsLongWaitsWithoutATerminal(t *testing.T) {
	var out strings.Builder
	var errb testenv.Buffer
	s := NewOneShot(OneShotOptions{Stdout: &out, Stderr: &errb, WaitEvery: 20 * time.Millisecond})
	defer s.Close()
	s.Event(agent.OperationStarted{})
	s.Event(agent.ModelStarted{Model: agent.ModelInfo{Kind: session.OperationRun}})
	deadline := time.Now().Add(5 * time.Second)
	for strings.Count(errb.String(), "waiting for the model: ") < 2 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if n := strings.Count(errb.String(), "waiting for the model: "); n < 2 {
		t.Fatalf("%d waiting lines:\n%s", n, errb.String())
	}
	s.Event(agent.ModelDelta{Text: "hello"})
	before := errb.String()
	time.Sleep(100 * time.Millisecond)
	if after := errb.String(); after != before {
		t.Errorf("waiting lines after the reply started:\n%s", after[len(before):])
	}
	if strings.Contains(out.String(), "waiting") {
		t.Errorf("stdout got a waiting line: %q", out.String())
	}
}

// While a question waits on stderr (Asking), no spinner frame is drawn
// over its line; afterwards the spinner goes on.
func TestOneShotSpinnerHoldsWhileAsking(t *testing.T) {
	var out strings.Builder
	var errb testenv.Buffer
	s := NewOneShot(OneShotOptions{Stdout: &out, Stderr: &errb})
	defer s.Close()
	s.mu.Lock()
	s.spin = true // as on a terminal
	s.mu.Unlock()
	go s.animate()
	s.Event(agent.OperationStarted{})
	s.Asking(true)
	fmt.Fprint(s.Stderr(), "Allow? y = once:")
	time.Sleep(5 * tickEvery)
	if got := errb.String(); !strings.HasSuffix(got, "Allow? y = once:") {
		t.Fatalf("the question's line was drawn over: %q", got)
	}
	s.Asking(false)
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(errb.String(), "Thinking…") && time.Now().Before(deadline) {
		time.Sleep(tickEvery)
	}
	if !strings.Contains(errb.String(), "Thinking…") {
		t.Errorf("no spinner after the answer: %q", errb.String())
	}
}
