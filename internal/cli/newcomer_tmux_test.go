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
// terminal, in a fresh git project with a Claude Code user's habits (issue
// 47): the banner, /help, Shift+Tab, the read-only commands, a first
// prompt, a command approved, a subagent refused, a hook's block, Esc Esc
// for the rewind list, a rewind of a git turn said in words, then lsp
// status without gopls, session list with the subagent, worker --help.
func TestNewcomerWalk(t *testing.T) {
	needTmux(t)
	w := startWalk(t)
	w.firstLook()
	w.firstTurns()
	w.rewindGitTurn()
	w.p.keys("C-c", "C-c")
	w.p.waitText("EXIT=0")
	w.afterSession()
}

// walk is the newcomer's terminal and project.
type walk struct {
	t   *testing.T
	p   *tmuxPane
	dir string
}

// say types a line, sends it and waits for each of want.
func (w *walk) say(line string, want ...string) {
	w.t.Helper()
	w.p.text(line)
	w.p.keys("Enter")
	for _, s := range want {
		w.p.waitText(s)
	}
}

// startWalk makes the project (a git repository with a Go module and a
// hook that refuses rm -rf) and starts tiny-go in it, with neither gopls
// nor tiny-go-fleet on PATH; after it exits, the pane runs the commands a
// newcomer tries next.
func startWalk(t *testing.T) *walk {
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
	dir, home := t.TempDir(), t.TempDir()
	guard := `case \"$(cat)\" in *'rm -rf'*) echo 'no rm -rf in this project' >&2; exit 2;; esac`
	for name, content := range map[string]string{
		"main.go": "package main\n", "go.mod": "module walk\n\ngo 1.22\n",
		".claude/settings.local.json": `{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"` + guard + `"}]}]}}`,
	} {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gitIn(t, dir, "init", "-q", "-b", "main")
	gitIn(t, dir, "add", "-A")
	gitIn(t, dir, "-c", "user.name=n", "-c", "user.email=n@x", "commit", "-qm", "init")

	bin := programAs(t, "tiny-go")
	p := &tmuxPane{t: t, socket: fmt.Sprintf("tinygo-newcomer-%d", os.Getpid())}
	env := fmt.Sprintf("HOME=%s PATH=%s TERM=tmux-256color OPENROUTER_API_KEY=k OTEL_SDK_DISABLED=true TINY_ENDPOINT=%s", home, pathWithout("gopls", "tiny-go-fleet"), srv.URL())
	after := fmt.Sprintf(`%[1]s lsp status; %[1]s session list; %[1]s worker --help; echo WALK-DONE`, bin)
	script := fmt.Sprintf(`cd %s && export %s && %s; echo EXIT=$?; %s; sleep 60`, dir, env, bin, after)
	p.tmux("new-session", "-d", "-x", "100", "-y", "30", "-s", "s", "sh", "-c", script)
	t.Cleanup(func() { killTmux(p.socket) })
	return &walk{t: t, p: p, dir: dir}
}

// firstLook: the banner, /help, Shift+Tab and the read-only commands.
func (w *walk) firstLook() {
	p := w.p
	// The banner says how to stop and how to exit, once each.
	p.waitText("Esc aborts a run; Ctrl+C clears a draft, and twice on an empty prompt exits.")
	p.waitText("(/ lists all)")
	// /help: every command and key, Shift+Tab and Esc Esc included.
	w.say("/help", "Shift+Tab", "/permissions", "/agents", "/todos", "/mcp", "/hooks", "Esc Esc", "/rewind [N]")
	w.say("/permissions", "Approval mode: ask: ask before bash", "Permission rules: none", "Allowed for this session: nothing yet")
	// Shift+Tab cycles ask → auto → plan → ask; the line under the input
	// says which and how to leave it.
	p.keys("BTab")
	p.waitText("⏵⏵ auto mode: calls run without asking (shift+tab to cycle)")
	p.keys("BTab")
	p.waitText("⏸ plan mode: read-only (shift+tab to cycle)")
	p.keys("BTab")
	p.wait("ask mode again", func(s string) bool { return !strings.Contains(s, "⏸ plan mode") })
	w.say("/agents", "general", "explore", "This session has started no subagent yet.")
	w.say("/todos", "No todo list in this session")
	w.say("/mcp", "No MCP servers. Add one with: tiny-go mcp add")
	w.say("/hooks", "PreToolUse", "settings.local.json")
}

// firstTurns: a prompt, an approved command, a refused subagent and a
// hook's block, each said on screen.
func (w *walk) firstTurns() {
	p := w.p
	w.say("hello", "Hello! I can read, change and run things here.")
	// The footer's share of the window and /status's agree.
	p.waitText("% of window")
	w.say("/status", "window: 5% of 128000 tokens")
	w.say("make a feature branch", "Allow bash? y allow once")
	p.text("y")
	p.waitText("Committed on branch feature.")
	// A subagent's question says who asks; its refused call shows.
	w.say("check that it builds", "◆ Task(check the build) · general", "Allow the general subagent's bash? y allow once", "the general subagent's bash wants to:")
	w.say("n", "The subagent could not build.", "[general]   └ denied")
	// A hook's block names the hook and its reason.
	w.say("clean the build", "The hook stopped me.", "└ blocked by a PreToolUse hook: no rm -rf in this project")
}

// rewindGitTurn: Esc Esc lists the turns; the git turn's preview and
// result are in words (details lists every path); the tree and git are
// back.
func (w *walk) rewindGitTurn() {
	t, p := w.t, w.p
	p.keys("Escape")
	p.waitText("Esc again to rewind")
	p.keys("Escape")
	p.waitText("Type a turn number")
	w.say("2 files details", "restore   .git/HEAD")
	w.say("n", "Rewind cancelled; nothing changed.")
	p.keys("Escape")
	p.waitCount("Esc again to rewind", 1)
	p.keys("Escape")
	p.waitCount("Type a turn number", 2)
	w.say("2 files")
	p.waitCount("Rewind? y to do it", 2)
	w.inWords("Rewinding files to before turn 2", "git: switch back to branch main, remove branch feature, undo 1 commit",
		"restore   main.go", "delete    notes.txt", "of git's own files (/rewind 2 details lists them)")
	w.say("y", "Files put back to before turn 2")
	w.inWords("Files put back to before turn 2", "git: switched back to branch main, removed branch feature, undid 1 commit",
		"restored  main.go", "deleted   notes.txt", " of git's own files")
	if b, _ := os.ReadFile(filepath.Join(w.dir, "main.go")); string(b) != "package main\n" {
		t.Errorf("main.go = %q", b)
	}
	if _, err := os.Stat(filepath.Join(w.dir, "notes.txt")); !os.IsNotExist(err) {
		t.Errorf("notes.txt is still there: %v", err)
	}
	if out := gitIn(t, w.dir, "branch", "--show-current"); out != "main" {
		t.Errorf("on branch %q after the rewind", out)
	}
	if out := gitIn(t, w.dir, "branch", "--list", "feature"); out != "" {
		t.Errorf("branch feature is still there: %q", out)
	}
}

// inWords checks the last report that starts with head: it says each of
// want and names none of .git's files.
func (w *walk) inWords(head string, want ...string) {
	w.t.Helper()
	w.p.waitText(want[0])
	screen := w.p.screen()
	report := screen[strings.LastIndex(screen, head):]
	for _, s := range want {
		if !strings.Contains(report, s) {
			w.t.Errorf("the report lacks %q:\n%s", s, report)
		}
	}
	if strings.Contains(report, ".git/") {
		w.t.Errorf("the report names git's internals:\n%s", report)
	}
}

// afterSession: lsp status names the missing server and its install;
// session list nests the subagent's session in a table of 100 columns;
// worker --help prints.
func (w *walk) afterSession() {
	p := w.p
	p.waitText("WALK-DONE")
	for _, want := range []string{"Missing: gopls is not on PATH", "(general)", "Usage:", "tiny-go worker --temporal"} {
		p.waitText(want)
	}
	joined := p.tmux("capture-pane", "-p", "-J", "-S", "-500", "-t", "s")
	list := joined[strings.LastIndex(joined, "ID  "):strings.LastIndex(joined, "Run agent tasks")]
	if !strings.Contains(list, "└ ") || !strings.Contains(list, "(general)") {
		w.t.Errorf("session list does not nest the subagent:\n%s", list)
	}
	for _, line := range strings.Split(list, "\n") {
		if n := len([]rune(line)); n > 100 {
			w.t.Errorf("a line of %d columns: %q", n, line)
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
