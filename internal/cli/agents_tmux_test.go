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

// childScript: the parent hands "deploy" to general, whose command waits
// (its pid in dir/pid) until it is killed.
func childScript() agentScript {
	return agentScript{
		parent: func(turn int, last providertest.Message) providertest.Reply {
			if *last.Content == "hello" {
				return providertest.Reply{Text: "hello back"}
			}
			if last.Role == "user" {
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
	}
}

func readPidFile(t *testing.T, file string) int {
	t.Helper()
	waitFile(t, file)
	var pid int
	b, _ := os.ReadFile(file)
	fmt.Sscan(strings.TrimSpace(string(b)), &pid)
	return pid
}

// TestSubagentEscTmux: Esc while a child runs a command aborts the child
// durably (its session ends aborted, its command's process group is
// gone) and then the parent; the next prompt works.
func TestSubagentEscTmux(t *testing.T) {
	needTmux(t)
	srv := providertest.New(t)
	srv.Respond(childScript().reply)
	dir, marks := t.TempDir(), t.TempDir()
	bin := programAs(t, "tiny-go")
	p := &tmuxPane{t: t, socket: fmt.Sprintf("tinygo-agent-esc-%d", os.Getpid())}
	script := fmt.Sprintf(`cd %s && MARKS=%s TERM=tmux-256color OPENROUTER_API_KEY=k OTEL_SDK_DISABLED=true TINY_ENDPOINT=%s %s --approval auto; echo EXIT=$?; sleep 60`, dir, marks, srv.URL(), bin)
	p.tmux("new-session", "-d", "-x", "120", "-y", "45", "-s", "s", "sh", "-c", script)
	t.Cleanup(func() { killTmux(p.socket) })
	p.waitText("/compact  /skill:name  /exit")
	p.text("deploy it")
	p.keys("Enter")
	pid := readPidFile(t, filepath.Join(marks, "pid"))
	p.waitText("⎿ [general] ◆ bash echo run >> runs.txt")
	p.keys("Escape")
	p.waitText("Aborted.")
	if procs.GroupAlive(pid) {
		t.Fatalf("the child's command (group %d) survived Esc", pid)
	}
	parent, children := parentAndChildren(t, dir)
	if len(children) != 1 {
		t.Fatalf("%d child sessions", len(children))
	}
	for path, st := range children {
		b, _ := os.ReadFile(path)
		if !st.Idle() || !strings.Contains(string(b), `"type":"abortRequested"`) || !strings.Contains(string(b), `"outcome":"aborted"`) {
			t.Fatalf("the child did not end aborted:\n%s", b)
		}
	}
	if !parent.Idle() || toolResults(parent)["k1"] != session.ContentInterrupted {
		t.Fatalf("the parent: idle %v, results %q", parent.Idle(), toolResults(parent))
	}
	p.text("hello")
	p.keys("Enter")
	p.waitText("hello back")
	p.keys("C-c", "C-c")
	p.waitText("EXIT=0")
}

// TestSubagentCrashTmux: SIGKILL of tiny-go while a child runs a command,
// then `tiny-go --continue` in the terminal: the child is recovered first
// (told its command was interrupted; the command is not run again), its
// answer reaches the parent, and the parent's model answers with it.
func TestSubagentCrashTmux(t *testing.T) {
	needTmux(t)
	srv := providertest.New(t)
	srv.Respond(childScript().reply)
	dir, marks := t.TempDir(), t.TempDir()
	bin := programAs(t, "tiny-go")
	env := fmt.Sprintf("MARKS=%s TERM=tmux-256color OPENROUTER_API_KEY=k OTEL_SDK_DISABLED=true TINY_ENDPOINT=%s", marks, srv.URL())
	p := &tmuxPane{t: t, socket: fmt.Sprintf("tinygo-agent-kill-%d", os.Getpid())}
	script := fmt.Sprintf(`cd %s && echo $$ > tinygo.pid && exec env %s %s --approval auto`, dir, env, bin)
	p.tmux("new-session", "-d", "-x", "120", "-y", "45", "-s", "s", "sh", "-c", script+"; sleep 60")
	t.Cleanup(func() { killTmux(p.socket) })
	p.waitText("/compact  /skill:name  /exit")
	p.text("deploy it")
	p.keys("Enter")
	pid := readPidFile(t, filepath.Join(marks, "pid"))
	tiny := readPidFile(t, filepath.Join(dir, "tinygo.pid"))
	if err := syscall.Kill(tiny, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}

	q := &tmuxPane{t: t, socket: fmt.Sprintf("tinygo-agent-cont-%d", os.Getpid())}
	script = fmt.Sprintf(`cd %s && env %s %s --approval auto --continue; echo EXIT=$?; sleep 60`, dir, env, bin)
	q.tmux("new-session", "-d", "-x", "120", "-y", "45", "-s", "s", "sh", "-c", script)
	t.Cleanup(func() { killTmux(q.socket) })
	want := "parent got: child saw: " + session.ContentInterrupted
	q.waitText("Recovered the open run: completed.")
	q.waitText("── resumed ──")
	if procs.GroupAlive(pid) {
		t.Errorf("the child's command (group %d) outlived the crash", pid)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "runs.txt")); string(b) != "run\n" {
		t.Errorf("the command ran %d times", strings.Count(string(b), "run"))
	}
	parent, children := parentAndChildren(t, dir)
	if len(children) != 1 || !parent.Idle() {
		t.Fatalf("%d child sessions, parent idle %v", len(children), parent.Idle())
	}
	if n := len(parent.Transcript); n == 0 || *parent.Transcript[n-1].Content != want {
		t.Fatalf("the parent's last message is not %q", want)
	}
	q.text("hello")
	q.keys("Enter")
	q.waitText("hello back")
	q.keys("C-c", "C-c")
	q.waitText("EXIT=0")
}

// TestParallelSubagentsTmux: in the terminal, a reply with two task calls
// runs a restricted agent from .claude/agents (tools: Read) and general at
// the same time; each child's progress is whole lines under its label, and
// both reports reach the parent.
func TestParallelSubagentsTmux(t *testing.T) {
	needTmux(t)
	dir := t.TempDir()
	writeAgent(t, dir, "reader", "---\nname: reader\ndescription: Reads one file.\ntools: Read\n---\nYou are the reader agent.\n")
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("N-7\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := providertest.New(t)
	srv.Respond(agentScript{
		parent: func(turn int, last providertest.Message) providertest.Reply {
			if turn == 0 {
				// general first: run alone, it would never see the reader's session.
				return providertest.Reply{ToolCalls: []providertest.ToolCall{taskCall("k1", "general", "wait for the reader"), taskCall("k2", "reader", "read notes.txt")}}
			}
			return providertest.Reply{Text: "both back"}
		},
		children: map[string]func(int, providertest.Message) providertest.Reply{
			"You are the reader agent.": func(turn int, last providertest.Message) providertest.Reply {
				if turn == 0 {
					return providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("r1", "read", `{"path":"notes.txt"}`), toolCall("r2", "write", `{"path":"x","content":"x"}`)}}
				}
				return providertest.Reply{Text: "reader report"}
			},
			generalPrompt: func(turn int, last providertest.Message) providertest.Reply {
				if turn == 0 {
					// Runs until the reader has started: the two run together.
					return providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("g1", "bash", `{"command":"touch g-started; for i in $(seq 400); do ls .tiny-agent/sessions/*.jsonl | wc -l | grep -q 3 && echo together && exit 0; sleep 0.05; done; echo alone"}`)}}
				}
				return providertest.Reply{Text: "general report: " + strings.TrimSpace(*last.Content)}
			},
		},
	}.reply)
	bin := programAs(t, "tiny-go")
	p := &tmuxPane{t: t, socket: fmt.Sprintf("tinygo-agent-par-%d", os.Getpid())}
	script := fmt.Sprintf(`cd %s && TERM=tmux-256color OPENROUTER_API_KEY=k OTEL_SDK_DISABLED=true TINY_ENDPOINT=%s %s --approval auto; echo EXIT=$?; sleep 60`, dir, srv.URL(), bin)
	p.tmux("new-session", "-d", "-x", "140", "-y", "50", "-s", "s", "sh", "-c", script)
	t.Cleanup(func() { killTmux(p.socket) })
	p.waitText("/compact  /skill:name  /exit")
	p.text("fan out")
	p.keys("Enter")
	p.waitText("both back")
	screen := p.screen()
	for _, want := range []string{"⎿ [reader] ◆ read notes.txt", "⎿ [general] ◆ bash touch g-started", "⎿ [reader] done", "⎿ [general] done"} {
		if !strings.Contains(screen, want) {
			t.Errorf("the screen lacks %q", want)
		}
	}
	for _, l := range strings.Split(screen, "\n") {
		if strings.Count(l, "⎿ [") > 1 {
			t.Errorf("two children on one line: %q", l)
		}
	}
	parent, _ := parentAndChildren(t, dir)
	res := toolResults(parent)
	if res["k2"] != "reader report" || res["k1"] != "general report: together" {
		t.Fatalf("results %q\n%s", res, screen)
	}
	if _, err := os.Stat(filepath.Join(dir, "x")); err == nil {
		t.Fatal("the reader wrote a file it was not offered the tool for")
	}
	p.keys("C-c", "C-c")
	p.waitText("EXIT=0")
}
