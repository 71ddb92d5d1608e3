package cli

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tiny-agent/tiny-go/internal/agents"
	"github.com/tiny-agent/tiny-go/internal/providertest"
	"github.com/tiny-agent/tiny-go/internal/session"
)

// A scripted conversation with subagents: the parent and each child are
// told apart by their system prompt, and each answers by how far its own
// conversation has come, so children running in parallel get the right
// replies whatever the order of their requests.
type agentScript struct {
	parent func(turn int, last providertest.Message) providertest.Reply
	// children by the start of their system prompt.
	children map[string]func(turn int, last providertest.Message) providertest.Reply
}

func (s agentScript) reply(r providertest.Request) providertest.Reply {
	msgs := r.Chat.Messages
	turn := 0
	for _, m := range msgs {
		if m.Role == "assistant" {
			turn++
		}
	}
	last := msgs[len(msgs)-1]
	sys := ""
	if msgs[0].Role == "system" && msgs[0].Content != nil {
		sys = *msgs[0].Content
	}
	for prefix, f := range s.children {
		if strings.HasPrefix(sys, prefix) {
			return f(turn, last)
		}
	}
	return s.parent(turn, last)
}

func taskCall(id, agent, prompt string) providertest.ToolCall {
	return toolCall(id, "task", fmt.Sprintf(`{"description":"work on %s","prompt":%q,"subagent_type":%q}`, id, prompt, agent))
}

// requestsOf are the recorded requests whose system prompt starts with
// prefix.
func requestsOf(srv *providertest.Server, prefix string) []providertest.Request {
	var out []providertest.Request
	for _, r := range srv.Requests() {
		if m := r.Chat.Messages; len(m) > 0 && m[0].Content != nil && strings.HasPrefix(*m[0].Content, prefix) {
			out = append(out, r)
		}
	}
	return out
}

func allSessions(t *testing.T, dir string) map[string]*session.State {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, ".tiny-agent", "sessions", "*.jsonl"))
	out := map[string]*session.State{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		st, c := session.Reduce(b)
		if c != nil {
			t.Fatalf("%s does not reduce: %v", f, c)
		}
		out[f] = st
	}
	return out
}

// parentAndChildren splits the sessions of dir into the one that is no
// subagent's and its children.
func parentAndChildren(t *testing.T, dir string) (parent *session.State, children map[string]*session.State) {
	t.Helper()
	children = map[string]*session.State{}
	for path, st := range allSessions(t, dir) {
		if _, ok := agents.ParentOf(path); ok {
			children[path] = st
			continue
		}
		if parent != nil {
			t.Fatal("two sessions are no subagent's")
		}
		parent = st
	}
	if parent == nil {
		t.Fatal("no parent session")
	}
	return parent, children
}

func writeAgent(t *testing.T, dir, name, text string) {
	t.Helper()
	d := filepath.Join(dir, ".claude", "agents")
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d, name+".md"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func runIn(t *testing.T, dir string, srv *providertest.Server, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := program(t, dir, srv, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, out.String(), errb.String()
}

// TestSubagentFromClaudeAgents: an agent from .claude/agents with tools
// "Read" is offered only read (its bash call is an unknown tool), its body
// is its system prompt, its answer is the parent's tool result, its tokens
// roll up into the parent's session, and `session list` shows its session
// under the parent's.
func TestSubagentFromClaudeAgents(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("alpha\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	writeAgent(t, dir, "reader", "---\nname: reader\ndescription: Reads files and reports what they say.\ntools: Read\nmodel: inherit\n---\nYou are the reader agent. Report what the file says.\n")
	srv := providertest.New(t)
	srv.Respond(agentScript{
		parent: func(turn int, last providertest.Message) providertest.Reply {
			if turn == 0 {
				return providertest.Reply{ToolCalls: []providertest.ToolCall{taskCall("t1", "reader", "What does a.txt say?")}}
			}
			return providertest.Reply{Text: "parent heard: " + *last.Content}
		},
		children: map[string]func(int, providertest.Message) providertest.Reply{
			"You are the reader agent.": func(turn int, last providertest.Message) providertest.Reply {
				if turn == 0 {
					return providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("r1", "read", `{"path":"a.txt"}`), toolCall("r2", "bash", `{"command":"touch bash-ran"}`)}}
				}
				cost := 0.25
				return providertest.Reply{Text: "a.txt says alpha", Usage: &providertest.Usage{PromptTokens: 1000, CompletionTokens: 50, Cost: &cost}}
			},
		},
	}.reply)
	code, stdout, stderr := runIn(t, dir, srv, "ask the reader")
	if code != 0 || strings.TrimSpace(stdout) != "parent heard: a.txt says alpha" {
		t.Fatalf("exit %d, stdout %q, stderr:\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "cost $0.2500 for 4 request(s)") {
		t.Errorf("the child's cost is not in the parent's:\n%s", stderr)
	}
	if !strings.Contains(stderr, "⎿ [reader] ◆ read a.txt") {
		t.Errorf("stderr does not show the child's call:\n%s", stderr)
	}
	kid := requestsOf(srv, "You are the reader agent.")
	if len(kid) != 2 {
		t.Fatalf("%d child requests", len(kid))
	}
	if tl := kid[0].Chat.Tools; len(tl) != 1 || tl[0].Function.Name != "read" {
		t.Fatalf("the child was offered %+v", tl)
	}
	parentTools := srv.Requests()[0].Chat.Tools
	var desc string
	for _, tl := range parentTools {
		if tl.Function.Name == "task" {
			desc = tl.Function.Description
		}
	}
	for _, want := range []string{"- reader: Reads files and reports what they say.", "- explore: ", "- general: "} {
		if !strings.Contains(desc, want) {
			t.Errorf("the task tool's description lacks %q:\n%s", want, desc)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "bash-ran")); err == nil {
		t.Fatal("the child ran a tool it was not offered")
	}
	parent, children := parentAndChildren(t, dir)
	if len(children) != 1 {
		t.Fatalf("%d child sessions", len(children))
	}
	for _, st := range children {
		res := toolResults(st)
		if !strings.Contains(res["r1"], "alpha") || res["r2"] != session.SyntheticContent(session.ReasonUnknownTool) {
			t.Errorf("child results: %q", res)
		}
		if st.Usage.Input != 1000 || parent.Usage.Input < 1000 || parent.Usage.Output < 50 {
			t.Errorf("usage: child %+v, parent %+v", st.Usage, parent.Usage)
		}
	}
	_, js, _ := runIn(t, dir, srv, "session", "list", "--json")
	if !strings.Contains(js, `"parent": "`+parent.Header.ID+`"`) || !strings.Contains(js, `"agent": "reader"`) {
		t.Errorf("session list --json lacks the link:\n%s", js)
	}
	code, list, errs := runIn(t, dir, srv, "session", "list")
	lines := strings.Split(strings.TrimSpace(list), "\n")
	if code != 0 || len(lines) != 3 || !strings.HasPrefix(lines[2], "└ ") || !strings.Contains(lines[2], " (reader") {
		t.Fatalf("session list (exit %d):\n%s%s", code, list, errs)
	}
	checkShortIDs(t, dir, srv, lines, parent.Header.ID)
}

// checkShortIDs: the lines of `session list` fit 100 columns, and the short
// id it prints for the parent is taken where an id is; a prefix both
// sessions share is refused in one line.
func checkShortIDs(t *testing.T, dir string, srv *providertest.Server, lines []string, parentID string) {
	t.Helper()
	for _, l := range lines {
		if n := utf8.RuneCountInString(l); n > 100 {
			t.Errorf("session list: a line of %d columns:\n%s", n, strings.Join(lines, "\n"))
		}
	}
	short := strings.Fields(lines[1])[0]
	if len(short) >= len(parentID) || !strings.HasPrefix(parentID, short) {
		t.Fatalf("session list prints %q for %s", short, parentID)
	}
	for _, args := range [][]string{{"session", "show", short}, {"session", "verify", short}, {"session", "state", short}} {
		if code, out, errs := runIn(t, dir, srv, args...); code != 0 || !strings.Contains(out+errs, parentID) {
			t.Errorf("tiny-go %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errs)
		}
	}
	for _, args := range [][]string{{"session", "show", parentID[:4]}, {"--session", parentID[:4], "go on"}, {"session", "rewind", parentID[:4]}, {"session", "fork", parentID[:4]}, {"session", "abort", parentID[:4]}} {
		code, _, errs := runIn(t, dir, srv, args...)
		if code != 2 || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "is ambiguous: 2 sessions start with it") {
			t.Errorf("tiny-go %s: exit %d\n%s", strings.Join(args, " "), code, errs)
		}
	}
}

// TestNestedSubagents: with TINY_AGENT_MAX_DEPTH=2 a child gets the task
// tool (never with the default depth of 1) and its own child is linked
// under it.
func TestNestedSubagents(t *testing.T) {
	dir := t.TempDir()
	srv := providertest.New(t)
	srv.Respond(agentScript{
		parent: func(turn int, last providertest.Message) providertest.Reply {
			if turn == 0 {
				return providertest.Reply{ToolCalls: []providertest.ToolCall{taskCall("k1", "general", "delegate further")}}
			}
			return providertest.Reply{Text: "top: " + *last.Content}
		},
		children: map[string]func(int, providertest.Message) providertest.Reply{
			generalPrompt: func(turn int, last providertest.Message) providertest.Reply {
				if turn == 0 {
					return providertest.Reply{ToolCalls: []providertest.ToolCall{taskCall("k2", "explore", "look")}}
				}
				return providertest.Reply{Text: "middle: " + *last.Content}
			},
			"You are a read-only exploration subagent": func(int, providertest.Message) providertest.Reply {
				return providertest.Reply{Text: "bottom"}
			},
		},
	}.reply)
	cmd := program(t, dir, srv, "go deep")
	cmd.Env = append(cmd.Env, "TINY_AGENT_MAX_DEPTH=2")
	out, err := cmd.Output()
	if err != nil || strings.TrimSpace(string(out)) != "top: middle: bottom" {
		t.Fatalf("%v: %q", err, out)
	}
	files, _ := filepath.Glob(filepath.Join(dir, ".tiny-agent", "sessions", "*.jsonl"))
	links := map[string]string{} // agent -> parent id
	for _, f := range files {
		if l, ok := agents.ParentOf(f); ok {
			links[l.Agent] = l.Parent
			if l.Agent == "general" {
				links["general-id"] = l.Child
			}
		}
	}
	if len(files) != 3 || links["explore"] == "" || links["explore"] != links["general-id"] {
		t.Fatalf("%d sessions, links %v", len(files), links)
	}
	// The grandchild (depth 2) was offered no task tool.
	for _, r := range requestsOf(srv, "You are a read-only exploration subagent") {
		for _, tl := range r.Chat.Tools {
			if tl.Function.Name == "task" {
				t.Fatal("the grandchild was offered task")
			}
		}
	}
}
