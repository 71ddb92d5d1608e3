package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/approval"
	"github.com/tiny-agent/tiny-go/internal/providertest"
)

// "a" lasts for the rest of the session, not the process: after an exit,
// a --continue in a new process runs `ls -la` without asking, still asks
// about another first word, and a fork of the session starts without the
// rule.
func TestAlwaysAllowLastsAcrossResume(t *testing.T) {
	bash := func(id, cmd string) providertest.Reply {
		return providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall(id, "bash", fmt.Sprintf(`{"command":%q}`, cmd))}}
	}
	srv := providertest.New(t,
		bash("c1", "ls"),
		providertest.Reply{Text: "listed"},
		bash("c2", "ls -la"),
		bash("c3", "cat notes.txt"),
		providertest.Reply{Text: "listed again"},
		bash("c4", "ls -l"),
		providertest.Reply{Text: "listed in the fork"},
	)
	c := newCLI(t, srv)
	c.write("notes.txt", "hello\n")

	// Interactive line mode: the question is a line on stderr, answered on
	// stdin after the prompt.
	code, stdout, stderr := c.main("list files\na\n/exit\n", "--approval", "ask")
	if code != 0 || !strings.Contains(stdout, "listed") {
		t.Fatalf("first run: exit %d\n%s\n%s", code, stdout, stderr)
	}
	// (In line mode the question is on stdout, in one-shot mode on stderr.)
	if n := strings.Count(stdout+stderr, "wants to: Run a command"); n != 1 || !strings.Contains(stdout, "a = always allow `ls` commands") {
		t.Fatalf("first run asked %d times:\n%s\n%s", n, stdout, stderr)
	}
	id := c.state().Header.ID

	code, stdout, stderr = c.main("n\n", "--approval", "ask", "--continue", "list them again")
	if code != 0 || !strings.Contains(stdout, "listed again") {
		t.Fatalf("resume: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if n := strings.Count(stdout+stderr, "wants to: Run a command"); n != 1 || strings.Contains(stderr, "    ls -la") || !strings.Contains(stderr, "cat notes.txt") {
		t.Fatalf("resume asked %d times, want only about cat:\n%s", n, stderr)
	}
	reqs := srv.Requests()
	msgs := reqs[len(reqs)-1].Chat.Messages
	var results []string
	for _, m := range msgs {
		if m.Role == "tool" && m.Content != nil {
			results = append(results, *m.Content)
		}
	}
	if len(results) != 3 || !strings.Contains(results[1], "notes.txt") || !strings.HasPrefix(results[2], "Error: The user denied this tool call") {
		t.Fatalf("tool results sent to the model: %q", results)
	}

	// A fork asks afresh, once the rule Claude Code's way kept in
	// .claude/settings.local.json (for every session of the project) is
	// gone.
	local := filepath.Join(c.dir, ".claude", "settings.local.json")
	if b, err := os.ReadFile(local); err != nil || !strings.Contains(string(b), `"Bash(ls:*)"`) {
		t.Fatalf("settings.local.json: %s, %v", b, err)
	}
	if err := os.Remove(local); err != nil {
		t.Fatal(err)
	}
	st := c.state()
	code, out, stderr := c.main("", "session", "fork", id, "--at", strconv.FormatInt(st.Facts, 10))
	if code != 0 {
		t.Fatalf("fork: %s", stderr)
	}
	forkID := strings.TrimSpace(out[strings.LastIndex(out, "--session ")+len("--session "):])
	rules, err := approval.LoadRules(filepath.Join(c.dir, ".tiny-agent", "sessions", forkID+".jsonl"))
	if err != nil || len(rules) != 0 {
		t.Fatalf("the fork has rules %q, %v", rules, err)
	}
	code, stdout, stderr = c.main("y\n", "--approval", "ask", "--session", forkID, "list in the fork")
	if code != 0 || !strings.Contains(stdout, "listed in the fork") {
		t.Fatalf("fork run: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "wants to: Run a command") || !strings.Contains(stderr, "    ls -l") {
		t.Fatalf("the fork ran ls without asking:\n%s", stderr)
	}
}

// /rewind's conversation fork, in the same process, also starts without
// the source session's rules; the source keeps them.
func TestRewindForkAsksAfresh(t *testing.T) {
	bash := func(id, cmd string) providertest.Reply {
		return providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall(id, "bash", fmt.Sprintf(`{"command":%q}`, cmd))}}
	}
	srv := providertest.New(t,
		bash("c1", "ls"),
		providertest.Reply{Text: "listed"},
		bash("c2", "ls -la"),
		providertest.Reply{Text: "listed again"},
		bash("c3", "ls -l"),
		providertest.Reply{Text: "listed in the fork"},
	)
	c := newCLI(t, srv)
	stdin := "list\na\nlist again\n/rewind 2\ny\nlist in the fork\ny\n/exit\n"
	code, stdout, stderr := c.main(stdin, "--approval", "ask")
	if code != 0 || !strings.Contains(stdout, "listed in the fork") {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	i := strings.Index(stdout, "Now in session ")
	if i < 0 {
		t.Fatalf("no fork:\n%s", stdout)
	}
	if n := strings.Count(stdout[:i], "wants to: Run a command"); n != 1 {
		t.Fatalf("asked %d times before the rewind, want 1:\n%s", n, stdout)
	}
	if n := strings.Count(stdout[i:], "wants to: Run a command"); n != 1 || !strings.Contains(stdout[i:], "    ls -l") {
		t.Fatalf("asked %d times in the fork, want 1 (about ls -l):\n%s", n, stdout[i:])
	}
	forkID := strings.TrimSuffix(strings.Fields(stdout[i+len("Now in session "):])[0], ":")
	for _, f := range c.sessions() {
		rules, err := approval.LoadRules(f)
		if err != nil {
			t.Fatal(err)
		}
		isFork := strings.Contains(filepath.Base(f), forkID)
		if isFork != (len(rules) == 0) {
			t.Fatalf("%s (fork %v) has rules %q", filepath.Base(f), isFork, rules)
		}
	}
}
