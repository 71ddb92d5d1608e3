package ui

import (
	"bytes"
	"context"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is an output the renderer writes from its own goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// The real program parses raw input bytes: escape sequences of arrow keys
// must never be taken for Esc, a lone ESC byte must.
func TestProgramTellsLoneEscFromEscapeSequences(t *testing.T) {
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer inR.Close()
	defer inW.Close()
	out := &syncBuffer{}
	obs := NewObserver("")
	eng := newStub(obs)
	done := make(chan error, 1)
	go func() {
		done <- runTTY(context.Background(), Options{In: inR, Out: out, Engine: eng, Observer: obs, Banner: Banner{SessionID: "s"}})
	}()
	write := func(s string) {
		if _, err := inW.WriteString(s); err != nil {
			t.Fatal(err)
		}
	}

	time.Sleep(100 * time.Millisecond)
	write("hello\r")
	waitFor(t, "the prompt", func() bool { return len(eng.promptsSeen()) == 1 })

	// CSI and SS3 arrows, modified arrows, Home, F1, Alt+x, each one write.
	for _, seq := range []string{"\x1b[A", "\x1b[B", "\x1b[C", "\x1b[D", "\x1bOA", "\x1b[1;5C", "\x1b[1;3D", "\x1b[H", "\x1bOP", "\x1bx"} {
		write(seq)
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond)
	if _, calls := eng.counts(); calls != 0 {
		t.Fatalf("escape sequences called Abort %d times", calls)
	}

	write("\x1b")
	waitFor(t, "the abort", func() bool { a, _ := eng.counts(); return a == 1 })
	waitFor(t, "the run to end", func() bool { return !eng.isRunning() })

	// Ctrl+C while idle: the first clears the draft (Up recalled
	// "hello"), the second asks, the third exits.
	for range 3 {
		write("\x03")
		time.Sleep(100 * time.Millisecond)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("runTTY: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Ctrl+C did not exit")
	}
	if !strings.Contains(out.String(), "Aborted.") {
		t.Errorf("output lacks the outcome:\n%q", out.String())
	}
	if a, calls := eng.counts(); a != 1 || calls != 1 {
		t.Errorf("Abort: %d aborted of %d calls, want 1 of 1", a, calls)
	}
}
