package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/procs"
	"github.com/tiny-agent/tiny-go/internal/providertest"
	"github.com/tiny-agent/tiny-go/internal/session"
)

// generalPrompt starts the system prompt of the built-in general agent.
const generalPrompt = "You are a subagent of tiny-go"

// TestParallelSubagents: three task calls in one reply run at the same
// time: each child's command waits until all three have started (one
// that ran alone would time out and say so). The results come back in
// the order of the calls, each the answer of its own child.
func TestParallelSubagents(t *testing.T) {
	dir := t.TempDir()
	srv := providertest.New(t)
	srv.Respond(agentScript{
		parent: func(turn int, last providertest.Message) providertest.Reply {
			if turn == 0 {
				return providertest.Reply{ToolCalls: []providertest.ToolCall{
					taskCall("k1", "general", "child 1"), taskCall("k2", "general", "child 2"), taskCall("k3", "general", "child 3"),
				}}
			}
			return providertest.Reply{Text: "all back"}
		},
		children: map[string]func(int, providertest.Message) providertest.Reply{
			generalPrompt: func(turn int, last providertest.Message) providertest.Reply {
				if turn == 0 {
					n := strings.TrimPrefix(*last.Content, "child ")
					cmd := fmt.Sprintf(`touch started-%s; for i in $(seq 200); do [ -e started-1 ] && [ -e started-2 ] && [ -e started-3 ] && echo together && exit 0; sleep 0.05; done; echo alone`, n)
					return providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("b"+n, "bash", mustJSON(t, map[string]string{"command": cmd}))}}
				}
				return providertest.Reply{Text: "child " + strings.TrimPrefix(last.ToolCallID, "b") + ": " + strings.TrimSpace(*last.Content)}
			},
		},
	}.reply)
	code, stdout, stderr := runIn(t, dir, srv, "fan out")
	if code != 0 || strings.TrimSpace(stdout) != "all back" {
		t.Fatalf("exit %d, stdout %q, stderr:\n%s", code, stdout, stderr)
	}
	parent, children := parentAndChildren(t, dir)
	if len(children) != 3 {
		t.Fatalf("%d child sessions", len(children))
	}
	// general has every tool but task: with the default depth no child
	// delegates further.
	for _, r := range requestsOf(srv, generalPrompt) {
		for _, tl := range r.Chat.Tools {
			if tl.Function.Name == "task" {
				t.Fatal("a child was offered task")
			}
		}
	}
	res := toolResults(parent)
	for i := 1; i <= 3; i++ {
		if want := fmt.Sprintf("child %d: together", i); res[fmt.Sprintf("k%d", i)] != want {
			t.Errorf("result of k%d: %q, want %q", i, res[fmt.Sprintf("k%d", i)], want)
		}
	}
	// Each child line on stderr is whole: it starts with the child's label.
	for _, l := range strings.Split(stderr, "\n") {
		if strings.Contains(l, "[general]") && !strings.HasPrefix(l, "  ⎿ [general] ") {
			t.Errorf("an interleaved line: %q", l)
		}
	}
	// The three started in one transaction, before any result.
	b, _ := os.ReadFile(sessionOf(t, dir, parent.Header.ID))
	first := strings.Index(string(b), `"role":"tool"`)
	if n := strings.Count(string(b)[:max(first, 0)], `"type":"toolStarted"`); n != 3 {
		t.Errorf("%d calls started before the first result", n)
	}
}

func sessionOf(t *testing.T, dir, id string) string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(dir, ".tiny-agent", "sessions", "*"+id+".jsonl"))
	if len(m) != 1 {
		t.Fatalf("%d files for session %s", len(m), id)
	}
	return m[0]
}

// TestSubagentCrashContinue: tiny-go is killed (SIGKILL) while a child
// runs a command; `--continue` recovers the child first (its command is
// not run again, and it is told it was interrupted), the child finishes,
// and its answer reaches the parent as the task call's result. No process
// is left, and the task itself was not started again.
func TestSubagentCrashContinue(t *testing.T) {
	dir := t.TempDir()
	srv := providertest.New(t)
	srv.Respond(agentScript{
		parent: func(turn int, last providertest.Message) providertest.Reply {
			if turn == 0 {
				return providertest.Reply{ToolCalls: []providertest.ToolCall{taskCall("k1", "general", "deploy")}}
			}
			return providertest.Reply{Text: "parent got: " + *last.Content}
		},
		children: map[string]func(int, providertest.Message) providertest.Reply{
			generalPrompt: func(turn int, last providertest.Message) providertest.Reply {
				if turn == 0 {
					return providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("b1", "bash", `{"command":"echo run >> runs.txt; echo $$ > $MARKS/pid; sleep 60"}`)}}
				}
				return providertest.Reply{Text: "child saw: " + *last.Content}
			},
		},
	}.reply)
	cmd := program(t, dir, srv, "deploy it")
	marks := t.TempDir() // outside the tree: over the overlay a running command's writes land when it ends
	cmd.Env = append(cmd.Env, "MARKS="+marks)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFile(t, filepath.Join(marks, "pid"))
	var pid int
	if b, err := os.ReadFile(filepath.Join(marks, "pid")); err == nil {
		fmt.Sscan(strings.TrimSpace(string(b)), &pid)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()

	code, stdout, stderr := runIn(t, dir, srv, "--continue", "--json")
	if code != 0 {
		t.Fatalf("continue: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if pid == 0 || procs.GroupAlive(pid) {
		t.Errorf("the child's command (group %d) outlived the crash and the resume", pid)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "runs.txt")); string(b) != "run\n" {
		t.Errorf("the command ran %d times", strings.Count(string(b), "run"))
	}
	parent, children := parentAndChildren(t, dir)
	if len(children) != 1 {
		t.Fatalf("%d child sessions: the task was started again", len(children))
	}
	for _, st := range children {
		if !st.Idle() || toolResults(st)["b1"] != session.ContentInterrupted {
			t.Fatalf("the child: idle %v, results %q", st.Idle(), toolResults(st))
		}
	}
	want := "child saw: " + session.ContentInterrupted
	if !parent.Idle() || toolResults(parent)["k1"] != want {
		t.Fatalf("the parent: idle %v, task result %q, want %q", parent.Idle(), toolResults(parent)["k1"], want)
	}
	if n := len(requestsOf(srv, generalPrompt)); n != 2 {
		t.Errorf("%d child requests, want 2", n)
	}
	if last := srv.Requests(); *last[len(last)-1].Chat.Messages[len(last[len(last)-1].Chat.Messages)-1].Content != want {
		t.Error("the parent's model did not get the child's answer")
	}
}
