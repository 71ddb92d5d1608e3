package ui

import (
	"errors"
	"github.com/tiny-agent/tiny-go/internal/commands"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/session"
)

func TestBannerLines(t *testing.T) {
	b := Banner{Provider: "openrouter", Endpoint: "https://openrouter.ai/api/v1", Model: "openai/gpt-5.6-luna",
		SessionID: "0197", SessionPath: "/s/0197.jsonl", Tools: []string{"bash", "read"}, MCP: []string{"gh"}}
	want := []string{
		"tiny-go",
		"provider: openrouter",
		"endpoint: https://openrouter.ai/api/v1",
		"model: openai/gpt-5.6-luna",
		"session id: 0197",
		"session path: /s/0197.jsonl",
		"tools: bash, read",
		"mcp: gh",
		"Ctrl+C aborts the active operation and exits; so does end of input (Ctrl+D).",
		"/help  /model  /compact  /skill:name  /exit  (/ lists all)",
	}
	if got := bannerLines(b, false); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("banner:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// The terminal UI says what its keys do, in one line: an idle Ctrl+C
	// clears a draft and exits only when pressed twice.
	tui := append(want[:len(want)-2:len(want)-2],
		"Esc aborts a run; Ctrl+C clears a draft, and twice on an empty prompt exits.", want[len(want)-1])
	if got := bannerLines(b, true); strings.Join(got, "\n") != strings.Join(tui, "\n") {
		t.Errorf("terminal banner:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tui, "\n"))
	}
	b.Restored, b.MCP = true, nil
	got := strings.Join(bannerLines(b, true), "\n")
	if !strings.Contains(got, "\nrestored: yes\n") || !strings.Contains(got, "\nmcp: (none)\n") {
		t.Errorf("resumed banner:\n%s", got)
	}
}

func TestToolStartLine(t *testing.T) {
	tests := []struct {
		tool, display, args, want string
	}{
		{"bash", "bash", `{"command":"ls -la\n  | wc -l","timeout":5}`, "◆ bash ls -la | wc -l"},
		{"read", "read", `{"path":"src/main.go","offset":10}`, "◆ read src/main.go"},
		{"write", "write", `{"content":"x","path":"a.txt"}`, "◆ write a.txt"},
		{"edit", "edit", `{"path":"b.go","edits":[]}`, "◆ edit b.go"},
		{"bg", "bg", `{"action":"start","command":"npm run dev"}`, "◆ bg start npm run dev"},
		{"bg", "bg", `{"action":"logs","id":"bg-1"}`, "◆ bg logs bg-1"},
		{"mcp__gh__search", "mcp:gh/search", `{"limit":3,"query":"bubble tea"}`, "◆ mcp:gh/search bubble tea"},
		{"mcp__x__y", "mcp:x/y", `{"n": 1, "ok": true}`, `◆ mcp:x/y {"n":1,"ok":true}`},
		{"bash", "bash", `not json`, "◆ bash not json"},
		{"bash", "bash", `{"command":"a"} trailing`, `◆ bash {"command":"a"} trailing`},
		{"bash", "bash", `{}`, "◆ bash {}"},
		{"bash", "bash", ``, "◆ bash"},
		{"bash", "bash", `{"command":"echo \u001b[31mred"}`, "◆ bash echo red"},
		{"x", "", `{"path":"p"}`, "◆ x p"},
	}
	for _, tt := range tests {
		got := toolStartLine(agent.ToolInfo{Tool: tt.tool, Display: tt.display, Arguments: tt.args}, 80)
		if got != tt.want {
			t.Errorf("%s %s: got %q, want %q", tt.tool, tt.args, got, tt.want)
		}
	}
}

func TestToolStartLineWidth(t *testing.T) {
	for _, args := range []string{
		`{"command":"` + strings.Repeat("echo 漢字かな ", 40) + `"}`,
		`{"command":"` + strings.Repeat("e\u0301", 200) + `"}`,
		`{"command":"` + strings.Repeat("🙂", 100) + `"}`,
		`{"command":"` + strings.Repeat("x", 500) + `"}`,
	} {
		for _, width := range []int{20, 41, 80} {
			got := toolStartLine(agent.ToolInfo{Tool: "bash", Display: "bash", Arguments: args}, width)
			if w := ansi.StringWidth(got); w > width {
				t.Errorf("width %d: line is %d cells: %q", width, w, got)
			}
			if !strings.HasSuffix(got, "…") {
				t.Errorf("width %d: cut line does not end with …: %q", width, got)
			}
		}
	}
}

func TestToolReports(t *testing.T) {
	tenLines := "l1\nl2\nl3\nl4\nl5\nl6\nl7\nl8\nl9\nl10\n"
	tests := []struct {
		tool    string
		outcome agent.ToolOutcome
		want    string // the report's lines, plain
	}{
		{"bash", agent.ToolOutcome{Outcome: "succeeded", Content: "hello\n"}, "  └ 6 chars\n    hello"},
		{"read", agent.ToolOutcome{Outcome: "succeeded", Content: "漢字e\u0301"}, "  └ 4 chars\n    漢字e\u0301"},
		{"read", agent.ToolOutcome{Outcome: "succeeded", Content: tenLines}, "  └ 31 chars\n    l1\n    l2\n    … 6 more lines\n    l9\n    l10"},
		{"bash", agent.ToolOutcome{Outcome: "succeeded", Content: "(no output)"}, "  └ (no output)"},
		{"bash", agent.ToolOutcome{Outcome: "failed", Content: "boom\n\nCommand exited with code 2"}, "  └ exit code 2\n    boom"},
		{"bash", agent.ToolOutcome{Outcome: "cancelled", Content: session.ContentInterrupted}, "  └ interrupted while running"},
		{"bash", agent.ToolOutcome{Outcome: "cancelled", Content: session.ContentInterrupted, Duration: 3 * time.Second, Partial: "(no output)"}, "  └ interrupted by you after 3 s"},
		{"bash", agent.ToolOutcome{Outcome: "failed", Content: agent.DeniedContent("too risky")}, "  └ denied: too risky"},
		{"bash", agent.ToolOutcome{Outcome: "failed", Content: agent.DeniedContent("")}, "  └ denied"},
		{"write", agent.ToolOutcome{Outcome: "succeeded", Content: "Successfully wrote 3 bytes to a."}, "  └ ok"},
		{"edit", agent.ToolOutcome{Outcome: "failed", Content: "edits[0].oldText was not found in a.\nmore"}, "  └ error: edits[0].oldText was not found in a."},
		{"read", agent.ToolOutcome{Outcome: "failed", Content: "Error: no such file\n"}, "  └ error: no such file"},
		{"read", agent.ToolOutcome{Outcome: "succeeded", Content: ""}, "  └ 0 chars"},
		{"bash", agent.ToolOutcome{Outcome: "succeeded", Content: "(no output)", Duration: 2345 * time.Millisecond}, "  └ (no output) · 2.3s"},
		{"bash", agent.ToolOutcome{Outcome: "succeeded", Content: "(no output)", Duration: 999 * time.Millisecond}, "  └ (no output)"},
	}
	for _, tt := range tests {
		r := buildReport(agent.ToolInfo{Tool: tt.tool}, tt.outcome, nil)
		if got := strings.Join(r.lines(80, plainStyles()), "\n"); got != tt.want {
			t.Errorf("%s %+v:\ngot  %q\nwant %q", tt.tool, tt.outcome, got, tt.want)
		}
	}
}

// A write or edit shows the diff of the file as it was when the call
// started against what the call wrote.
func TestToolLogDiff(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "main.go")
	if err := os.WriteFile(path, []byte("package main\n\nfunc main() {\n\treturn nil\n}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	log := &toolLog{workDir: dir}
	info := agent.ToolInfo{Tool: "edit", ExecutionID: "x1", Arguments: `{"path":"main.go","edits":[{"oldText":"\treturn nil","newText":"\tlog.Print()\n\treturn err"}]}`}
	log.started(info)
	// The effect happens after started.
	if err := os.WriteFile(path, []byte("package main\n\nfunc main() {\n\tlog.Print()\n\treturn err\n}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := log.report(info, agent.ToolOutcome{Outcome: "succeeded", Content: "Successfully replaced 1 block(s) in main.go.", Duration: 1500 * time.Millisecond})
	got := strings.Join(r.lines(80, plainStyles()), "\n")
	want := "  └ ok +2 -1 · 1.5s\n    @@ -1,5 +1,6 @@\n     package main\n\n     func main() {\n    -    return nil\n    +    log.Print()\n    +    return err\n     }"
	if got != want {
		t.Errorf("edit report:\n%s\nwant:\n%s", got, want)
	}
	colored := strings.Join(r.lines(80, colorStyles()), "\n")
	if !strings.Contains(colored, colorStyles().add.Render("    +    return err")) {
		t.Errorf("added lines are not coloured:\n%q", colored)
	}
	// A new file: everything is added.
	info = agent.ToolInfo{Tool: "write", ExecutionID: "x2", Arguments: `{"path":"new.txt","content":"a\nb\n"}`}
	log.started(info)
	r = log.report(info, agent.ToolOutcome{Outcome: "succeeded", Content: "Successfully wrote 4 bytes to new.txt."})
	if got := strings.Join(r.lines(80, plainStyles()), "\n"); got != "  └ ok +2 -0\n    @@ -0,0 +1,2 @@\n    +a\n    +b" {
		t.Errorf("write report:\n%s", got)
	}
}

func TestUsageLine(t *testing.T) {
	tests := []struct {
		u         session.Usage
		last, win int64
		want      string
	}{
		{session.Usage{Input: 100, Output: 50, CacheRead: 850, CacheWrite: 50}, 0, 0, "1k in · 50 out · 85% cached"},
		{session.Usage{Input: 1, Output: 2, CacheRead: 998, CacheWrite: 1}, 0, 0, "1k in · 2 out · 99% cached"}, // floored
		{session.Usage{Input: 0, Output: 7, CacheRead: 64}, 0, 0, "64 in · 7 out · 100% cached"},
		{session.Usage{Input: 2300, Output: 850, CacheRead: 10000}, 5000, 12000, "12.3k in · 850 out · 81% cached · 41% of window"},
		{session.Usage{Input: 1_234_567, Output: 999_999}, 0, 200000, "1.2M in · 1M out"},
		{session.Usage{}, 0, 0, "0 in · 0 out"},
	}
	m := usageMeter{}
	cost := 0.0123
	m.step(agent.ModelOutcome{Outcome: "succeeded", PromptTokens: 41000, ContextWindow: 100000, Cost: &cost})
	// A failed attempt or a summary request (no window) leaves the share.
	m.step(agent.ModelOutcome{Outcome: "failed", Cost: &cost})
	m.step(agent.ModelOutcome{Outcome: "succeeded", PromptTokens: 900000})
	m.operation(session.Usage{Input: 1000, Output: 20, CacheRead: 40000})
	if got, want := m.line(), "41k in · 20 out · 97% cached · 41% of window · $0.0246"; got != want {
		t.Errorf("with cost: got %q, want %q", got, want)
	}
	for _, tt := range tests {
		if got := (usageMeter{total: tt.u, lastPrompt: tt.last, window: tt.win}).line(); got != tt.want {
			t.Errorf("%+v: got %q, want %q", tt.u, got, tt.want)
		}
	}
}

func TestOutcomeLines(t *testing.T) {
	tests := []struct {
		res  agent.Result
		want string
	}{
		{agent.Result{Outcome: session.OutcomeCompleted}, ""},
		{agent.Result{Outcome: session.OutcomeAborted}, "Aborted."},
		{agent.Result{Outcome: session.OutcomeFailed, Error: &session.ErrorInfo{Message: "provider request failed"}}, "Failed: provider request failed"},
		{agent.Result{Outcome: session.OutcomeFailed}, "Failed: the operation failed"},
		{agent.Result{Outcome: session.OutcomeCompleted, Completion: session.CompletionTruncated}, "Stopped: the reply was cut off by the model token limit; its tool calls were not run."},
		{agent.Result{Blocked: "configuration_changed"}, "Blocked (configuration_changed): restore the matching configuration or run: tiny-go session abort s1"},
	}
	for _, tt := range tests {
		if got := runOutcomeLine(tt.res, "s1"); got != tt.want {
			t.Errorf("%+v: got %q, want %q", tt.res, got, tt.want)
		}
	}
	st := agent.CompactStats{Compacted: 12, Kept: 6}
	compact := []struct {
		res  agent.Result
		err  error
		want string
	}{
		{agent.Result{Outcome: session.OutcomeCompleted}, nil, "Compacted 12 messages (kept last 6)."},
		{agent.Result{}, agent.ErrNothingToCompact, "Nothing to compact."},
		{agent.Result{Outcome: session.OutcomeAborted}, nil, "Compaction aborted."},
		{agent.Result{Outcome: session.OutcomeFailed, Error: &session.ErrorInfo{Message: "bad summary"}}, nil, "Compaction failed: bad summary"},
		{agent.Result{}, errors.New("disk full"), "Error: disk full"},
	}
	for _, tt := range compact {
		if got := compactOutcomeLine(tt.res, st, tt.err, "s1"); got != tt.want {
			t.Errorf("compact %+v %v: got %q, want %q", tt.res, tt.err, got, tt.want)
		}
	}
}

func TestSanitize(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain\ttext\n", "plain\ttext\n"},
		{"a\x1b[31mred\x1b[0m\x07b", "aredb"},
		{"title\x1b]0;pwned\x07!", "title!"},
		{"crlf\r\nline\rx", "crlf\nline\nx"},
		{"bad\xffutf8", "badutf8"},
		{"c1\u009bcontrol", "c1control"},
		{"漢字 e\u0301", "漢字 e\u0301"},
	}
	for _, tt := range tests {
		if got := sanitize(tt.in); got != tt.want {
			t.Errorf("sanitize(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestTruncateCountsCells(t *testing.T) {
	tests := []struct {
		in    string
		width int
		want  string
	}{
		{"漢字漢字", 8, "漢字漢字"},
		{"漢字漢字", 7, "漢字漢…"},
		{"漢字漢字", 6, "漢字…"},
		{"e\u0301e\u0301e\u0301", 3, "e\u0301e\u0301e\u0301"}, // combining marks take no cell
		{"e\u0301e\u0301e\u0301e\u0301", 3, "e\u0301e\u0301…"},
		{"abc", 0, ""},
	}
	for _, tt := range tests {
		got := truncate(tt.in, tt.width)
		if got != tt.want {
			t.Errorf("truncate(%q, %d) = %q, want %q", tt.in, tt.width, got, tt.want)
		}
		if w := ansi.StringWidth(got); w > tt.width {
			t.Errorf("truncate(%q, %d) is %d cells", tt.in, tt.width, w)
		}
	}
}

func TestParseCommand(t *testing.T) {
	tests := []struct {
		in   string
		kind commandKind
		text string
	}{
		{"", cmdNone, ""},
		{"  \n ", cmdNone, ""},
		{" fix the bug \n", cmdPrompt, "fix the bug"},
		{"/exit", cmdExit, ""},
		{" /exit ", cmdExit, ""},
		{"/exit now", cmdInvalid, "/exit takes no arguments."},
		{"/compact", cmdCompact, ""},
		{"/compact\nplease", cmdInvalid, "/compact takes no arguments."},
		{"/skill:review look at x.go", cmdSkill, "/skill:review look at x.go"},
		{"/skill:review", cmdSkill, "/skill:review"},
		{"/skill:", cmdInvalid, "Usage: /skill:name [text]"},
		{"/skill", cmdInvalid, "Usage: /skill:name [text]"},
		{"/xyz", cmdInvalid, "Unknown command: /xyz. Commands: /help /clear /model /status /cost /resume /rewind /compact /diagnostics /skill:name /agents /todos /mcp /hooks /permissions /exit /quit /review"},
		{"/quit", cmdExit, ""},
		{"/model gpt-x", cmdModel, "gpt-x"},
		{"/review the parser", cmdCustom, "Review the parser."},
		{"!ls -la", cmdShell, "ls -la"},
		{"!", cmdPrompt, "!"},
		{"/usr/bin/env is missing", cmdPrompt, "/usr/bin/env is missing"},
		{"/", cmdPrompt, "/"},
		{"line one\n/exit", cmdPrompt, "line one\n/exit"},
	}
	for _, tt := range tests {
		got := parseCommand(tt.in, []commands.Command{{Name: "review", Body: "Review $ARGUMENTS."}})
		if got.kind != tt.kind || got.text != tt.text {
			t.Errorf("parseCommand(%q) = %v %q, want %v %q", tt.in, got.kind, got.text, tt.kind, tt.text)
		}
	}
}

func TestEchoLines(t *testing.T) {
	if got := echoLines("a\nb\x1b[2J"); got != "> a\n  b" {
		t.Errorf("echo = %q", got)
	}
}

func FuzzShortArgs(f *testing.F) {
	for _, s := range []string{`{"command":"ls"}`, `{"path":"漢字.go"}`, `{"a":[1,{"b":null}]}`, `[1,2]`, `{"x":"\u001b[31m"}`, `{`, `{"a":1}{}`, ""} {
		f.Add("bash", s, 40)
	}
	f.Fuzz(func(t *testing.T, tool, args string, width int) {
		width = width%200 + 1
		if width < 1 {
			width = -width + 1
		}
		got := shortArgs(tool, args, width)
		if w := ansi.StringWidth(got); w > width {
			t.Fatalf("shortArgs(%q, %q, %d) = %q, %d cells", tool, args, width, got, w)
		}
		if strings.ContainsAny(got, "\n\r\x1b\x07") {
			t.Fatalf("control characters in %q", got)
		}
	})
}

func FuzzParseCommand(f *testing.F) {
	for _, s := range []string{"/exit", "/compact x", "/skill:a b", "hello", "/a/b", " /skill: ", "/x\ty"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		c := parseCommand(in, nil)
		trimmed := strings.TrimSpace(in)
		switch c.kind {
		case cmdNone:
			if trimmed != "" {
				t.Fatalf("%q is not blank", in)
			}
		case cmdPrompt, cmdSkill:
			if c.text != trimmed {
				t.Fatalf("text %q, want %q", c.text, trimmed)
			}
		case cmdExit, cmdCompact:
			if trimmed != "/exit" && trimmed != "/compact" {
				t.Fatalf("%q parsed as %v", in, c.kind)
			}
		case cmdInvalid:
			if c.text == "" || strings.ContainsAny(c.text, "\n\x1b") {
				t.Fatalf("bad message %q", c.text)
			}
		}
	})
}

// A skill offered as a command (/name) runs as /skill:name.
func TestParseSkillCommand(t *testing.T) {
	custom := []commands.Command{{Name: "deploy", Skill: "deploy"}}
	if got := parseCommand("/deploy  to staging", custom); got.kind != cmdSkill || got.text != "/skill:deploy to staging" {
		t.Errorf("parseCommand = %v %q", got.kind, got.text)
	}
	if got := parseCommand("/deploy", custom); got.kind != cmdSkill || got.text != "/skill:deploy" {
		t.Errorf("parseCommand = %v %q", got.kind, got.text)
	}
}
