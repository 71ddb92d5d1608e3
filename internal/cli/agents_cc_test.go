package cli

import (
	"strings"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/providertest"
)

// Agent files as the public collections write them load with Claude
// Code's meaning: a dot in the name and an unquoted ": " in the
// description; tools: [] runs the child with no tools; an agent whose
// tools all do not exist is refused in one line, and nothing of it runs.
func TestClaudeAgentFiles(t *testing.T) {
	dir := t.TempDir()
	writeAgent(t, dir, "powershell-5.1-expert", "---\nname: powershell-5.1-expert\ndescription: Use this agent when: PowerShell 5.1 scripts need care\ntools: []\n---\nYou are the PowerShell agent.\n")
	writeAgent(t, dir, "web", "---\nname: web\ndescription: Browses\ntools: WebFetch, WebSearch\n---\nYou are the web agent.\n")
	srv := providertest.New(t)
	srv.Respond(agentScript{
		parent: func(turn int, last providertest.Message) providertest.Reply {
			switch turn {
			case 0:
				return providertest.Reply{ToolCalls: []providertest.ToolCall{taskCall("t1", "powershell-5.1-expert", "Say hi.")}}
			case 1:
				return providertest.Reply{ToolCalls: []providertest.ToolCall{taskCall("t2", "web", "Browse.")}}
			}
			return providertest.Reply{Text: "parent heard: " + *last.Content}
		},
		children: map[string]func(int, providertest.Message) providertest.Reply{
			"You are the PowerShell agent.": func(int, providertest.Message) providertest.Reply { return providertest.Reply{Text: "hi"} },
			"You are the web agent.":        func(int, providertest.Message) providertest.Reply { return providertest.Reply{Text: "browsed"} },
		},
	}.reply)
	code, stdout, stderr := runIn(t, dir, srv, "delegate")
	if code != 0 || strings.Contains(stderr, "not loaded") {
		t.Fatalf("exit %d, stdout %q, stderr:\n%s", code, stdout, stderr)
	}
	ps := requestsOf(srv, "You are the PowerShell agent.")
	if len(ps) != 1 || len(ps[0].Chat.Tools) != 0 {
		t.Fatalf("the tools: [] child: %d requests, tools %+v", len(ps), ps)
	}
	if web := requestsOf(srv, "You are the web agent."); len(web) != 0 {
		t.Fatal("the agent with only unknown tools ran")
	}
	// WebSearch is named as tiny-go names it (web_search, offered only
	// with a search; none here).
	if !strings.Contains(stdout, "none of its tools (") || !strings.Contains(stdout, "web_search) exists in this session") {
		t.Errorf("the model was not told why: %q", stdout)
	}
}
