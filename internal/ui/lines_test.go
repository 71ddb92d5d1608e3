package ui

import (
	"context"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tiny-agent/tiny-go/internal/ui/uitest"
)

func runLinesAsync(t *testing.T, eng *uitest.Engine, obs *Observer) (in *os.File, out *syncBuffer, done chan error, exited *bool) {
	t.Helper()
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inR.Close(); inW.Close() })
	out = &syncBuffer{}
	done = make(chan error, 1)
	exited = new(bool)
	go func() {
		done <- RunLines(context.Background(), Options{
			In: inR, Out: out, Engine: eng, Observer: obs,
			Banner: Banner{SessionID: "sess-9", Model: "fake"},
			ExpandSkill: func(s string) (string, error) {
				if !strings.HasPrefix(s, "/skill:demo") {
					return "", unknownSkillError(strings.TrimPrefix(s, "/skill:"))
				}
				return "SKILL BODY\n\nUser: go", nil
			},
			OnExit: func() { *exited = true },
		})
	}()
	return inW, out, done, exited
}

func wait(t *testing.T, done chan error) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("RunLines did not return")
		return nil
	}
}

func TestRunLinesOverPipes(t *testing.T) {
	obs := NewObserver("")
	eng := &uitest.Engine{Events: obs.Event, Delay: time.Millisecond, ToolTime: 10 * time.Millisecond}
	in, out, done, exited := runLinesAsync(t, eng, obs)
	io.WriteString(in, "/compact\nhello there\r\nrun the tool\n/bogus\n/skill:nope x\n/skill:demo\nplease fail\n/compact\n\n")
	in.Close() // EOF exits
	if err := wait(t, done); err != nil {
		t.Fatalf("RunLines: %v", err)
	}
	got := out.String()
	want := []string{
		"tiny-go\n",
		"session id: sess-9\n",
		helpKeysLine + "\n" + helpCommands + "\n",
		"Nothing to compact.\n",
		"You said: hello there\n\n- first point\n- second point\n1.1k in · 10 out · 85% cached\n",
		"Let me look.\n◆ bash sleep 30 && ls -la\n  └ 8 chars\n    total 0\nYou said: run the tool\n",
		"2.1k in · 14 out · 85% cached\n",
		"Unknown command: /bogus. Commands: /help /clear /model /status /cost /resume /rewind /compact /diagnostics /skill:name /agents /todos /mcp /hooks /permissions /exit /quit\n",
		"Unknown skill: nope x\n",
		"Failed: provider returned HTTP 500\n",
		"Compacted 4 messages (kept last 6).\n",
		"Resume: tiny-go --session sess-9\n",
	}
	pos := 0
	for _, w := range want {
		i := strings.Index(got[pos:], w)
		if i < 0 {
			t.Fatalf("output lacks %q after offset %d:\n%s", w, pos, got)
		}
		pos += i + len(w)
	}
	if !strings.HasSuffix(got, "Resume: tiny-go --session sess-9\n") {
		t.Errorf("the resume hint is not last:\n%s", got)
	}
	if strings.Contains(got, "\x1b") {
		t.Errorf("line mode wrote escape sequences:\n%q", got)
	}
	if p := eng.Prompts(); len(p) != 4 || p[2] != "SKILL BODY\n\nUser: go" {
		t.Errorf("prompts = %q", p)
	}
	if !*exited {
		t.Error("OnExit was not called")
	}
}

func TestRunLinesExitCommandStopsReading(t *testing.T) {
	obs := NewObserver("")
	eng := &uitest.Engine{Events: obs.Event, Delay: time.Millisecond}
	in, out, done, _ := runLinesAsync(t, eng, obs)
	io.WriteString(in, "/exit\nnot sent\n")
	if err := wait(t, done); err != nil {
		t.Fatalf("RunLines: %v", err)
	}
	if p := eng.Prompts(); len(p) != 0 {
		t.Errorf("prompts after /exit: %q", p)
	}
	if !strings.HasSuffix(out.String(), "Resume: tiny-go --session sess-9\n") {
		t.Errorf("output:\n%s", out.String())
	}
}

// A signal during a run aborts it and exits once it has ended.
func TestRunLinesSignalAbortsThenExits(t *testing.T) {
	obs := NewObserver("")
	eng := &uitest.Engine{Events: obs.Event, Delay: time.Millisecond, ToolTime: time.Minute}
	in, out, done, _ := runLinesAsync(t, eng, obs)
	io.WriteString(in, "run the tool\n")
	waitFor(t, "the tool to start", func() bool { return strings.Contains(out.String(), "◆ bash") })
	if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if err := wait(t, done); err != nil {
		t.Fatalf("RunLines: %v", err)
	}
	got := out.String()
	if !strings.Contains(got, "◆ bash sleep 30 && ls -la\n  └ interrupted") || !strings.Contains(got, "\nAborted.\n") {
		t.Errorf("output:\n%s", got)
	}
	if aborted, _ := eng.Aborts(); aborted != 1 {
		t.Errorf("aborted %d times, want 1", aborted)
	}
}
