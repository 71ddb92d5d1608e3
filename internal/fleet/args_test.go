package fleet

import (
	"slices"
	"strings"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/session"
)

// The agent's arguments: its approval mode as submitted (auto when
// unset), a new run of the prompt, the recovery of an open operation, or
// nothing to run when the session had already finished.
func TestAgentArgs(t *testing.T) {
	task := Task{Prompt: "fix it", Settings: Settings{Model: "m", Approval: "plan"}}
	args, finished, err := agentArgs(task, nil, "/root", "/root/repo")
	if err != nil || finished {
		t.Fatal(finished, err)
	}
	want := []string{"--json", "--cwd", "/root/repo", "--approval", "plan", "--model", "m", "--", "fix it"}
	if !slices.Equal(args, want) {
		t.Errorf("new run: %q, want %q", args, want)
	}
	task.Approval = ""
	if args, _, _ := agentArgs(task, nil, "/root", "/root/repo"); !slices.Contains(args, "auto") {
		t.Errorf("default approval: %q", args)
	}
	open := &session.State{Operation: &session.Operation{}}
	open.Header.ID = "sess-1"
	if args, _, _ := agentArgs(task, open, "/root", "/root/repo"); strings.Join(args[len(args)-2:], " ") != "--session sess-1" {
		t.Errorf("recovery: %q", args)
	}
	done := &session.State{}
	done.Header.ID = "sess-1"
	done.LastFinished.Outcome = session.OutcomeCompleted
	if _, finished, _ := agentArgs(task, done, "/root", "/root/repo"); !finished {
		t.Error("a finished session is run again")
	}
}

func TestSettingsCheckRefusesAsk(t *testing.T) {
	for mode, ok := range map[string]bool{"": true, "auto": true, "plan": true, "ask": false, "yolo": false} {
		err := Settings{Approval: mode}.check()
		if (err == nil) != ok {
			t.Errorf("--approval %q: %v", mode, err)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("--approval %q: more than one line: %v", mode, err)
		}
	}
}
