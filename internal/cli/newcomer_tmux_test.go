package cli

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/providertest"
)

// TestNewcomerWalk is a newcomer's first minutes in a real 100×30
// terminal, in a fresh git project with a Claude Code user's habits:
// the banner, /help, the read-only commands, a first prompt, a command
// approved, Esc Esc for the rewind list, and a rewind of a git turn whose
// preview speaks of branches and commits, not .git's files (issue 47).
func TestNewcomerWalk(t *testing.T) {
	needTmux(t)
	commit := `git checkout -q -b feature && echo 'package main // v2' > main.go && echo todo > notes.txt && git add -A && git -c user.name=n -c user.email=n@x commit -qm feature`
	srv := providertest.New(t,
		providertest.Reply{Text: "Hello! I can read, change and run things here.", Usage: &providertest.Usage{PromptTokens: 6400, CompletionTokens: 12}},
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c1", "bash", fmt.Sprintf(`{"command":%q}`, commit))}},
		providertest.Reply{Text: "Committed on branch feature."},
		// A subagent asks to run a command; the newcomer says no.
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c2", "task", `{"description":"check the build","prompt":"run make build","subagent_type":"general"}`)}},
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("k1", "bash", `{"command":"make build"}`)}},
		providertest.Reply{Text: "I was not allowed to build."},
		providertest.Reply{Text: "The subagent could not build."},
		// The project's hook blocks an rm -rf, and says why.
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c3", "bash", `{"command":"rm -rf build"}`)}},
		providertest.Reply{Text: "The hook stopped me."},
	)
	dir := t.TempDir()
	gitIn(t, dir, "init", "-q", "-b", "main")
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitIn(t, dir, "add", "-A")
	gitIn(t, dir, "-c", "user.name=n", "-c", "user.email=n@x", "commit", "-qm", "init")
	guard := `case \"$(cat)\" in *'rm -rf'*) echo 'no rm -rf in this project' >&2; exit 2;; esac`
	settings := `{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"` + guard + `"}]}]}}`
	if err := os.MkdirAll(filepath.Join(dir, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".claude", "settings.local.json"), []byte(settings), 0o644); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module walk\n\ngo 1.22\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitIn(t, dir, "add", "go.mod", ".claude")
	gitIn(t, dir, "-c", "user.name=n", "-c", "user.email=n@x", "commit", "-qm", "module")

	bin := programAs(t, "tiny-go")
	p := &tmuxPane{t: t, socket: fmt.Sprintf("tinygo-newcomer-%d", os.Getpid())}
	env := fmt.Sprintf("HOME=%s PATH=%s TERM=tmux-256color OPENROUTER_API_KEY=k OTEL_SDK_DISABLED=true TINY_ENDPOINT=%s", home, pathWithout("gopls", "tiny-go-fleet"), srv.URL())
	// After the session: the commands a newcomer tries next.
	after := fmt.Sprintf(`%[1]s lsp status; %[1]s session list; %[1]s worker --help; echo WALK-DONE`, bin)
	script := fmt.Sprintf(`cd %s && export %s && %s; echo EXIT=$?; %s; sleep 60`, dir, env, bin, after)
	p.tmux("new-session", "-d", "-x", "100", "-y", "30", "-s", "s", "sh", "-c", script)
	t.Cleanup(func() { killTmux(p.socket) })

	// The banner says how to stop and how to exit, once each.
	p.waitText("Esc aborts a run; Ctrl+C clears a draft, and twice on an empty prompt exits.")
	p.waitText("(/ lists all)")

	// /help: every command and key, Shift+Tab and Esc Esc included.
	p.text("/help")
	p.keys("Enter")
	p.waitText("Shift+Tab")
	for _, want := range []string{"/permissions", "/agents", "/todos", "/mcp", "/hooks", "Esc Esc", "/rewind [N]"} {
		p.waitText(want)
	}

	// The read-only commands show this session's state.
	say := func(cmd string, want ...string) {
		t.Helper()
		p.text(cmd)
		p.keys("Enter")
		for _, w := range want {
			p.waitText(w)
		}
	}
	say("/permissions", "Approval mode: ask: ask before bash", "Permission rules: none", "Allowed for this session: nothing yet")

	// Shift+Tab cycles ask → auto → plan → ask, and the line under the
	// input says which and how to leave it.
	p.keys("BTab")
	p.waitText("⏵⏵ auto mode: calls run without asking (shift+tab to cycle)")
	p.keys("BTab")
	p.waitText("⏸ plan mode: read-only (shift+tab to cycle)")
	p.keys("BTab")
	p.wait("ask mode again", func(s string) bool { return !strings.Contains(s, "⏸ plan mode") })
	say("/agents", "general", "explore", "This session has started no subagent yet.")
	say("/todos", "No todo list in this session")
	say("/mcp", "No MCP servers. Add one with: tiny-go mcp add")
	say("/hooks", "PreToolUse", "settings.local.json")

	// A first prompt, then a command the newcomer approves.
	say("hello", "Hello! I can read, change and run things here.")
	// The footer's share of the window and /status's agree.
	p.waitText("% of window")
	say("/status", "window: 5% of 128000 tokens")
	p.text("make a feature branch")
	p.keys("Enter")
	p.waitText("Allow bash? y allow once")
	p.text("y")
	p.waitText("Committed on branch feature.")

	// A subagent's question says who asks; its refused call shows.
	say("check that it builds", "◆ Task(check the build) · general")
	p.waitText("Allow the general subagent's bash? y allow once")
	p.waitText("the general subagent's bash wants to:")
	p.text("n")
	p.keys("Enter")
	p.waitText("The subagent could not build.")
	p.waitText("[general]   └ denied")

	// A hook's block names the hook and its reason.
	say("clean the build", "The hook stopped me.")
	p.waitText("└ blocked by a PreToolUse hook: no rm -rf in this project")

	// Esc once says what a second does; Esc Esc lists the turns.
	p.keys("Escape")
	p.waitText("Esc again to rewind")
	p.keys("Escape")
	p.waitText("Type a turn number")
	// details lists every path, git's own included; n cancels.
	p.text("2 files details")
	p.keys("Enter")
	p.waitText("restore   .git/HEAD")
	p.text("n")
	p.keys("Enter")
	p.waitText("Rewind cancelled; nothing changed.")
	p.keys("Escape")
	p.waitCount("Esc again to rewind", 1)
	p.keys("Escape")
	p.waitCount("Type a turn number", 2)
	p.text("2 files")
	p.keys("Enter")
	p.waitCount("Rewind? y to do it", 2)
	screen := p.screen()
	preview := screen[strings.LastIndex(screen, "Rewinding files to before turn 2"):]
	for _, want := range []string{"git: switch back to branch main, remove branch feature", "undo 1 commit", "restore   main.go", "delete    notes.txt", "of git's own files (/rewind 2 details lists them)"} {
		if !strings.Contains(preview, want) {
			t.Errorf("the preview lacks %q:\n%s", want, preview)
		}
	}
	t.Logf("the preview:\n%s", preview)
	if strings.Contains(preview, ".git/") {
		t.Errorf("the preview names git's internals:\n%s", preview)
	}
	p.text("y")
	p.keys("Enter")
	p.waitText("Files put back to before turn 2")
	p.waitText("git: switched back to branch main, removed branch feature, undid 1 commit")
	screen = p.screen()
	done := screen[strings.LastIndex(screen, "Files put back to before turn 2"):]
	for _, want := range []string{"restored  main.go", "deleted   notes.txt", " of git's own files"} {
		if !strings.Contains(done, want) {
			t.Errorf("the result lacks %q:\n%s", want, done)
		}
	}
	if strings.Contains(done, ".git/") {
		t.Errorf("the result names git's internals:\n%s", done)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "main.go")); string(b) != "package main\n" {
		t.Errorf("main.go = %q", b)
	}
	if _, err := os.Stat(filepath.Join(dir, "notes.txt")); !os.IsNotExist(err) {
		t.Errorf("notes.txt is still there: %v", err)
	}
	if out := gitIn(t, dir, "branch", "--show-current"); out != "main" {
		t.Errorf("on branch %q after the rewind", out)
	}
	if out := gitIn(t, dir, "branch", "--list", "feature"); out != "" {
		t.Errorf("branch feature is still there: %q", out)
	}
	p.keys("C-c", "C-c")
	p.waitText("EXIT=0")

	// lsp status names the missing server and its install; session list
	// nests the subagent's session in a table of 100 columns; worker
	// --help prints.
	p.waitText("WALK-DONE")
	for _, want := range []string{"Missing: gopls is not on PATH", "└ ", "(general)", "Usage:", "tiny-go worker --temporal"} {
		p.waitText(want)
	}
	joined := p.tmux("capture-pane", "-p", "-J", "-S", "-500", "-t", "s")
	list := joined[strings.LastIndex(joined, "ID  "):strings.LastIndex(joined, "Run agent tasks")]
	if !strings.Contains(list, "(general)") {
		t.Errorf("session list does not nest the subagent:\n%s", list)
	}
	for _, line := range strings.Split(list, "\n") {
		if w := len([]rune(line)); w > 100 {
			t.Errorf("a line of %d columns: %q", w, line)
		}
	}
}

// pathWithout is $PATH without the directories that hold any of names.
func pathWithout(names ...string) string {
	var keep []string
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		has := false
		for _, n := range names {
			if _, err := os.Stat(filepath.Join(d, n)); err == nil {
				has = true
			}
		}
		if !has {
			keep = append(keep, d)
		}
	}
	return strings.Join(keep, string(filepath.ListSeparator))
}

// gitIn runs git in dir and returns its output, trimmed.
func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}
