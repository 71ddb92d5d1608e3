package acp_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/agents"
	"github.com/tiny-agent/tiny-go/internal/planmode"
	"github.com/tiny-agent/tiny-go/internal/procs"
	"github.com/tiny-agent/tiny-go/internal/providertest"
	"github.com/tiny-agent/tiny-go/internal/session"
)

// route answers a parent and its children, told apart by their system
// prompts, from the last message of each conversation.
func route(parent func(last providertest.Message, prompt string) providertest.Reply, children map[string]func(last providertest.Message) providertest.Reply) func(providertest.Request) providertest.Reply {
	return func(r providertest.Request) providertest.Reply {
		msgs := r.Chat.Messages
		last := msgs[len(msgs)-1]
		sys := ""
		if msgs[0].Content != nil {
			sys = *msgs[0].Content
		}
		for prefix, f := range children {
			if strings.HasPrefix(sys, prefix) {
				return f(last)
			}
		}
		prompt := ""
		for _, m := range msgs {
			if m.Role == "user" && m.Content != nil {
				prompt = *m.Content
			}
		}
		return parent(last, prompt)
	}
}

func call(id, name, args string) providertest.ToolCall {
	return providertest.ToolCall{ID: id, Name: name, Arguments: args}
}

// sessionsOf splits the sessions of dir into the parent's state and its
// children's.
func sessionsOf(t *testing.T, dir string) (parent *session.State, children []*session.State) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, ".tiny-agent", "sessions", "*.jsonl"))
	for _, f := range files {
		b, _ := os.ReadFile(f)
		st, c := session.Reduce(b)
		if c != nil {
			t.Fatalf("%s: %v", f, c)
		}
		if _, ok := agents.ParentOf(f); ok {
			children = append(children, st)
		} else {
			parent = st
		}
	}
	return parent, children
}

func resultOf(st *session.State, callID string) string {
	for _, m := range st.Transcript {
		if m.Role == session.RoleTool && m.ToolCallID == callID && m.Content != nil {
			return *m.Content
		}
	}
	return ""
}

const (
	explorePrompt = "You are a read-only exploration subagent"
	generalPrompt = "You are a subagent of tiny-go"
)

// TestSDKClientAgents: over ACP with the official client, plan mode is a
// session mode (ls works, touch changes nothing), the todo list arrives
// as plan updates, a subagent's report is the task call's result, and
// session/list shows the child's session under its parent.
func TestSDKClientAgents(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "marker.txt"), []byte("M-42\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, ".claude", "agents"), 0o755); err != nil {
		t.Fatal(err)
	}
	reader := "---\nname: reader\ndescription: Reads one file.\ntools: Read\n---\nYou are the reader agent.\n"
	if err := os.WriteFile(filepath.Join(dir, ".claude", "agents", "reader.md"), []byte(reader), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := providertest.New(t)
	srv.Respond(route(func(last providertest.Message, prompt string) providertest.Reply {
		switch {
		case prompt == "and now?":
			return providertest.Reply{Text: "still here"}
		case strings.HasPrefix(prompt, "plan it") && last.Role == "user":
			return providertest.Reply{ToolCalls: []providertest.ToolCall{call("ls", "bash", `{"command":"ls"}`), call("touch", "bash", `{"command":"touch planned-file"}`)}}
		case strings.HasPrefix(prompt, "plan it"):
			return providertest.Reply{Text: "PLAN: 1. delegate"}
		case last.Role == "user":
			return providertest.Reply{ToolCalls: []providertest.ToolCall{
				call("todo", "todo_write", `{"todos":[{"content":"Find the marker","status":"in_progress","activeForm":"Finding the marker"},{"content":"Report","status":"pending","activeForm":"Reporting"}]}`),
				call("task", "task", `{"description":"find marker","prompt":"What does marker.txt say?","subagent_type":"explore"}`),
				call("task2", "task", `{"description":"read marker","prompt":"Read marker.txt.","subagent_type":"reader"}`),
			}}
		case last.ToolCallID == "task2":
			return providertest.Reply{Text: "DONE"}
		}
		return providertest.Reply{Text: "DONE: " + *last.Content}
	}, map[string]func(providertest.Message) providertest.Reply{
		"You are the reader agent.": func(last providertest.Message) providertest.Reply {
			if last.Role == "user" {
				return providertest.Reply{ToolCalls: []providertest.ToolCall{call("r1", "read", `{"path":"marker.txt"}`), call("r2", "bash", `{"command":"touch reader-bash"}`)}}
			}
			return providertest.Reply{Text: "reader done"}
		},
		// touch's complaint is dropped: stderr may come before cat's
		// stdout in the result (two pipes), and the test reads the marker.
		explorePrompt: func(last providertest.Message) providertest.Reply {
			if last.Role == "user" {
				return providertest.Reply{ToolCalls: []providertest.ToolCall{call("cat", "bash", `{"command":"cat marker.txt; touch explored 2>/dev/null"}`)}}
			}
			return providertest.Reply{Text: "marker says " + strings.Fields(*last.Content)[0]}
		},
	}))
	seen := sdkClient(t, srv, dir, "agents")

	modes, _ := json.Marshal(seen["modes"])
	if !strings.Contains(string(modes), `"id":"plan"`) {
		t.Fatalf("modes: %s", modes)
	}
	for _, f := range []string{"planned-file", "explored", "reader-bash"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			t.Errorf("%s was made: plan mode and explore keep the tree read-only", f)
		}
	}
	parent, children := sessionsOf(t, dir)
	if !strings.Contains(resultOf(parent, "ls"), "marker.txt") || !strings.Contains(resultOf(parent, "touch"), "exited with code 1") {
		t.Errorf("plan mode: ls %q, touch %q", resultOf(parent, "ls"), resultOf(parent, "touch"))
	}
	if !strings.HasSuffix(*srv.Requests()[0].Chat.Messages[1].Content, planmode.Reminder) {
		t.Error("the prompt in plan mode lacks the reminder")
	}
	plans := updatesOf(seen, "plan")
	if len(plans) == 0 {
		t.Fatal("no plan update")
	}
	entries, _ := json.Marshal(plans[len(plans)-1]["entries"])
	if !strings.Contains(string(entries), `"content":"Find the marker"`) || !strings.Contains(string(entries), `"status":"in_progress"`) {
		t.Fatalf("plan entries: %s", entries)
	}
	if got := resultOf(parent, "task"); got != "marker says M-42" {
		t.Fatalf("the task result is %q", got)
	}
	if got := resultOf(parent, "task2"); got != "reader done" {
		t.Fatalf("the reader's result is %q", got)
	}
	if len(children) != 2 || !children[0].Idle() || !children[1].Idle() {
		t.Fatalf("%d children", len(children))
	}
	for _, r := range srv.Requests() {
		if m := r.Chat.Messages; strings.HasPrefix(*m[0].Content, "You are the reader agent.") && (len(r.Chat.Tools) != 1 || r.Chat.Tools[0].Function.Name != "read") {
			t.Fatalf("the reader was offered %d tools", len(r.Chat.Tools))
		}
	}
	list, _ := json.Marshal(seen["list"])
	var l struct {
		Sessions []struct {
			SessionID string         `json:"sessionId"`
			Title     string         `json:"title"`
			Meta      map[string]any `json:"_meta"`
		} `json:"sessions"`
	}
	if err := json.Unmarshal(list, &l); err != nil || len(l.Sessions) != 3 {
		t.Fatalf("session/list: %s", list)
	}
	agentsListed := map[any]bool{}
	for _, c := range l.Sessions[1:] {
		if c.Meta["parentSessionId"] != seen["sessionId"] {
			t.Fatalf("session/list does not list the children under their parent: %s", list)
		}
		agentsListed[c.Meta["agent"]] = true
	}
	if l.Sessions[0].SessionID != seen["sessionId"] || !agentsListed["explore"] || !agentsListed["reader"] {
		t.Fatalf("session/list: %s", list)
	}

	// Loaded again, the session's todo list reaches the editor once more.
	loaded := sdkClient(t, srv, dir, "load", "ACP_SESSION="+seen["sessionId"].(string))
	if plans := updatesOf(loaded, "plan"); len(plans) != 1 {
		t.Fatalf("%d plan updates after session/load", len(plans))
	}
	if users := updatesOf(loaded, "user_message_chunk"); len(users) == 0 || users[0]["content"].(map[string]any)["text"] != "plan it" {
		t.Fatalf("the replayed prompt keeps the plan-mode reminder: %v", users)
	}
	if l.Sessions[0].Title != "plan it" {
		t.Fatalf("the listed title is %q", l.Sessions[0].Title)
	}
}

// childRunsForever is a parent that hands "deploy" to general, whose
// command records its run and pid, then waits.
func childRunsForever(answer, pid string) func(providertest.Request) providertest.Reply {
	return route(func(last providertest.Message, prompt string) providertest.Reply {
		if prompt == "and now?" {
			return providertest.Reply{Text: "now: " + answer}
		}
		if last.Role == "user" {
			return providertest.Reply{ToolCalls: []providertest.ToolCall{call("task", "task", `{"description":"deploy","prompt":"deploy","subagent_type":"general"}`)}}
		}
		return providertest.Reply{Text: "parent got: " + *last.Content}
	}, map[string]func(providertest.Message) providertest.Reply{
		generalPrompt: func(last providertest.Message) providertest.Reply {
			if last.Role == "user" {
				return providertest.Reply{ToolCalls: []providertest.ToolCall{call("b1", "bash", pidCommand(pid, "echo run >> runs.log; "))}}
			}
			return providertest.Reply{Text: "child saw: " + *last.Content}
		},
	})
}

func nsGroup(t *testing.T, dir, pidPath string) int {
	t.Helper()
	b, _ := os.ReadFile(pidPath)
	nsPid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return procs.HostPID(nsPid, dir)
}

// TestSDKClientCancelDuringChild: session/cancel while a subagent runs a
// command aborts the child durably, then the parent.
func TestSDKClientCancelDuringChild(t *testing.T) {
	dir, pid := t.TempDir(), pidFile(t)
	srv := providertest.New(t)
	srv.Respond(childRunsForever("", pid))
	seen := sdkClient(t, srv, dir, "cancel-child", "ACP_PID="+pid)
	if seen["prompt"].(map[string]any)["stopReason"] != "cancelled" {
		t.Fatalf("prompt: %v", seen["prompt"])
	}
	parent, children := sessionsOf(t, dir)
	if len(children) != 1 || !children[0].Idle() || children[0].LastFinished.Outcome != session.OutcomeAborted {
		t.Fatalf("the child did not end aborted: %d children", len(children))
	}
	if !parent.Idle() || parent.LastFinished.Outcome != session.OutcomeAborted || resultOf(parent, "task") != session.ContentInterrupted {
		t.Fatalf("the parent: %+v, task %q", parent.LastFinished, resultOf(parent, "task"))
	}
	if resultOf(children[0], "b1") != session.ContentInterrupted {
		t.Fatalf("the child's command: %q", resultOf(children[0], "b1"))
	}
}

// TestSDKClientLoadAfterSIGKILLInChild: tiny-go killed while a subagent
// runs a command; session/load of the parent recovers the child first
// (its command is not run again, it is told it was interrupted), the
// child's answer becomes the parent's task result, and the session goes
// on.
func TestSDKClientLoadAfterSIGKILLInChild(t *testing.T) {
	dir, pidPath := t.TempDir(), pidFile(t)
	want := "parent got: child saw: " + session.ContentInterrupted
	srv := providertest.New(t)
	srv.Respond(childRunsForever(want, pidPath))
	cmd := exec.Command(selfLink(t), "deploy")
	cmd.Dir = dir
	cmd.Env = agentEnv(srv.URL())
	startUntilPid(t, cmd, pidPath)
	pid := nsGroup(t, dir, pidPath)
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	parent, _ := sessionsOf(t, dir)
	seen := sdkClient(t, srv, dir, "load", "ACP_SESSION="+parent.Header.ID)

	if b, _ := os.ReadFile(filepath.Join(dir, "runs.log")); string(b) != "run\n" {
		t.Fatalf("the child's command ran again: %q", b)
	}
	if pid > 1 && procs.GroupAlive(pid) {
		t.Errorf("the child's command (group %d) outlived the crash", pid)
	}
	parent, children := sessionsOf(t, dir)
	if len(children) != 1 || resultOf(children[0], "b1") != session.ContentInterrupted {
		t.Fatalf("children %d", len(children))
	}
	if resultOf(parent, "task") != "child saw: "+session.ContentInterrupted {
		t.Fatalf("the parent's task result: %q", resultOf(parent, "task"))
	}
	if got := agentText(seen); !strings.HasSuffix(got, "now: "+want) {
		t.Fatalf("answers %q", got)
	}
}
