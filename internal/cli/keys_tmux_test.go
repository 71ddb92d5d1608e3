package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	goimage "image"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/providertest"
)

// lastUser is the content of the last user message of request i.
func lastUser(t *testing.T, srv *providertest.Server, i int) string {
	t.Helper()
	reqs := srv.Requests()
	if len(reqs) <= i {
		t.Fatalf("%d requests, want more than %d", len(reqs), i)
	}
	msgs := reqs[i].Chat.Messages
	for j := len(msgs) - 1; j >= 0; j-- {
		if msgs[j].Role == "user" && msgs[j].Content != nil {
			return *msgs[j].Content
		}
	}
	t.Fatalf("request %d has no user message", i)
	return ""
}

// TestTmuxKeysAndCommands is the keyboard a Claude Code or Codex user
// brings, in a real terminal against the scripted model: the command
// menu, /help, /model, /status, /cost, a custom command, a folded paste,
// \+Enter, !cmd, and Ctrl+C that clears a draft before it exits. It reads
// the screen and the requests the model received.
func TestTmuxKeysAndCommands(t *testing.T) {
	needTmux(t)
	srv := providertest.New(t,
		providertest.Reply{Text: "reviewed it"},
		providertest.Reply{Text: "got the paste", Usage: &providertest.Usage{PromptTokens: 50, CompletionTokens: 5}},
		providertest.Reply{Text: "two lines seen"},
		providertest.Reply{Text: "saw the shell"},
	)
	dir := t.TempDir()
	cmdDir := filepath.Join(dir, ".tiny-agent", "commands")
	if err := os.MkdirAll(cmdDir, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(cmdDir, "review.md"), []byte("---\ndescription: Review a file for bugs\n---\nReview $1 for bugs; focus on $ARGUMENTS.\n"), 0o644)
	os.WriteFile(filepath.Join(cmdDir, "help.md"), []byte("shadow"), 0o644)
	os.MkdirAll(filepath.Join(dir, ".claude", "commands"), 0o755)
	os.WriteFile(filepath.Join(dir, ".claude", "commands", "broken.md"), []byte("---\ndescription: x\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "marker.txt"), []byte("MARKER-CONTENT\n"), 0o644)

	bin := programAs(t, "tiny-go")
	p := &tmuxPane{t: t, socket: fmt.Sprintf("tinygo-keys-%d", os.Getpid())}
	script := fmt.Sprintf(`cd %s && HOME=%s TERM=tmux-256color OPENROUTER_API_KEY=k OTEL_SDK_DISABLED=true TINY_ENDPOINT=%s %s --approval auto --model first/model; echo EXIT=$?; sleep 60`, dir, dir, srv.URL(), bin)
	p.tmux("new-session", "-d", "-x", "220", "-y", "60", "-s", "s", "sh", "-c", script)
	t.Cleanup(func() { killTmux(p.socket) })
	p.waitText("(/ lists all)")
	p.waitText("help.md: /help is a built-in command and cannot be replaced; rename the file")
	p.waitText("broken.md: front matter starts with --- but never ends")

	// The menu: "/" lists everything, typing filters, Down moves, Tab
	// completes.
	p.text("/")
	p.waitText("/status")
	p.waitText("↑↓ for more (18 commands)")
	p.keys("Up") // wraps to the last: the custom command
	p.waitText("› /review              Review a file for bugs (custom)")
	p.text("mo")
	p.wait("the filtered menu", func(s string) bool {
		return strings.Contains(s, "› /model [id]") && !strings.Contains(s, "/status  ")
	})
	p.keys("Escape")
	p.keys("BSpace", "BSpace", "BSpace")
	p.text("/re")
	p.waitText("› /resume")
	p.keys("Down")
	p.waitText("› /rewind")
	p.keys("Down", "Tab")
	p.wait("/review completed", func(s string) bool { return strings.Contains(s, "> /review") && !strings.Contains(s, "› ") })
	p.text("main.go error handling")
	p.keys("Enter")
	p.waitText("reviewed it")
	if got := lastUser(t, srv, 0); got != "Review main.go for bugs; focus on main.go error handling." {
		t.Fatalf("the custom command sent %q", got)
	}
	if m := srv.Requests()[0].Chat.Model; m != "first/model" {
		t.Fatalf("model %q", m)
	}

	// /help lists every command and the keys; an unknown one lists them.
	p.text("/help")
	p.keys("Enter")
	p.waitText("Custom commands:\n  /review                Review a file for bugs")
	p.waitText("Ctrl+C                 clear the input")
	p.text("/nosuch")
	p.keys("Enter")
	p.waitText("Unknown command: /nosuch. Commands: /help /clear /model /status /cost /resume /rewind /compact /diagnostics /skill:name /agents /todos /mcp /hooks /permissions /exit /quit /review")

	// /model switches for the rest of the session.
	p.text("/model second/model")
	p.keys("Enter")
	p.waitText("Model: second/model (for the rest of this session)")
	p.text("/status")
	p.keys("Enter")
	p.waitText("model: second/model")
	p.waitText("approval: auto")

	// A long paste is folded in the input and the echo; the model gets it
	// all.
	var long []string
	for i := 1; i <= 40; i++ {
		long = append(long, fmt.Sprintf("pasted line %d", i))
	}
	p.tmux("set-buffer", "-b", "big", strings.Join(long, "\n"))
	p.text("summarize ")
	p.tmux("paste-buffer", "-p", "-b", "big", "-t", "s")
	p.waitText("> summarize [Pasted text #1 +40 lines]")
	p.keys("Enter")
	p.waitText("got the paste")
	if got := lastUser(t, srv, 1); got != "summarize "+strings.Join(long, "\n") {
		t.Fatalf("the paste sent %q", got)
	}
	if strings.Contains(p.screen(), "pasted line 7") {
		t.Fatalf("the paste was echoed line by line:\n%s", p.screen())
	}
	if m := srv.Requests()[1].Chat.Model; m != "second/model" {
		t.Fatalf("after /model the request went to %q", m)
	}
	p.waitText("· second/model")

	// \ + Enter continues the line.
	p.text(`first line\`)
	p.keys("Enter")
	p.text("second line")
	// Shift+Enter as a terminal with the kitty keyboard protocol reports
	// it (CSI 13;2u); tmux 3.3 has no key name for it.
	p.text("\x1b[13;2u")
	p.text("third line")
	p.keys("Enter")
	p.waitText("two lines seen")
	if got := lastUser(t, srv, 2); got != "first line\nsecond line\nthird line" {
		t.Fatalf(`\+Enter sent %q`, got)
	}

	// !cmd runs in the shell; the model sees command and output next turn.
	p.text("!cat marker.txt")
	p.keys("Enter")
	p.waitCount("MARKER-CONTENT", 1)
	if n := len(srv.Requests()); n != 3 {
		t.Fatalf("!cmd sent a request (%d)", n)
	}
	p.text("what did it print?")
	p.keys("Enter")
	p.waitText("saw the shell")
	if got := lastUser(t, srv, 3); !strings.Contains(got, "I ran `cat marker.txt` in the shell:\n```\nMARKER-CONTENT\n```") || !strings.HasSuffix(got, "what did it print?") {
		t.Fatalf("the prompt after !cmd was %q", got)
	}
	p.text("/cost")
	p.keys("Enter")
	p.waitText("this session:")

	// Ctrl+C clears a draft, Up brings it back; on an empty prompt the
	// first asks, the second exits.
	p.text("a draft to keep")
	p.keys("C-c")
	p.wait("the draft cleared", func(s string) bool {
		return strings.Contains(s, "Input cleared") && !strings.Contains(s, "> a draft to keep")
	})
	p.keys("Up")
	p.waitText("> a draft to keep")
	p.keys("C-c")
	p.keys("C-c")
	p.waitText("Ctrl+C again to exit")
	if strings.Contains(p.screen(), "EXIT=") {
		t.Fatal("exited on the first Ctrl+C")
	}
	p.keys("C-c")
	p.waitText("EXIT=0")

	b, _ := os.ReadFile(sessionFiles(t, dir)[0])
	if !strings.Contains(string(b), "MARKER-CONTENT") || !strings.Contains(string(b), "pasted line 40") {
		t.Fatal("the session lacks the shell output or the paste")
	}
}

// TestTmuxMentions: @ completes paths (not ignored ones), a mentioned
// file's content and a directory's listing go with the prompt and show in
// the transcript; a path through a symlink out of the directory and a
// binary file are refused with one line, and nothing is sent.
func TestTmuxMentions(t *testing.T) {
	needTmux(t)
	srv := providertest.New(t,
		providertest.Reply{Text: "read the file"},
		providertest.Reply{Text: "saw the listing"},
	)
	dir := t.TempDir()
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("OUTSIDE"), 0o644)
	os.MkdirAll(filepath.Join(dir, "src", "parser"), 0o755)
	os.WriteFile(filepath.Join(dir, "src", "parser", "lexer.go"), []byte("package parser\n// LEXER-BODY\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "src", "main.go"), []byte("package main\n"), 0o644)
	os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("build/\n"), 0o644)
	os.MkdirAll(filepath.Join(dir, "build"), 0o755)
	os.WriteFile(filepath.Join(dir, "build", "lexer.o"), []byte("x"), 0o644)
	os.WriteFile(filepath.Join(dir, "blob.bin"), []byte{0, 1, 2, 3, 0xff}, 0o644)
	os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(dir, "link.txt"))

	bin := programAs(t, "tiny-go")
	p := &tmuxPane{t: t, socket: fmt.Sprintf("tinygo-mention-%d", os.Getpid())}
	script := fmt.Sprintf(`cd %s && HOME=%s TERM=tmux-256color OPENROUTER_API_KEY=k OTEL_SDK_DISABLED=true TINY_ENDPOINT=%s %s --approval auto; echo EXIT=$?; sleep 60`, dir, dir, srv.URL(), bin)
	p.tmux("new-session", "-d", "-x", "160", "-y", "50", "-s", "s", "sh", "-c", script)
	t.Cleanup(func() { killTmux(p.socket) })
	p.waitText("(/ lists all)")

	p.text("explain @lexer")
	p.waitText("› @src/parser/lexer.go")
	if strings.Contains(p.screen(), "build/lexer.o") {
		t.Fatalf("an ignored path is offered:\n%s", p.screen())
	}
	p.keys("Tab")
	p.waitText("> explain @src/parser/lexer.go")
	p.keys("Enter")
	p.waitText("⎿ attached src/parser/lexer.go (29 bytes)")
	p.waitText("read the file")
	if got := lastUser(t, srv, 0); !strings.HasPrefix(got, "explain @src/parser/lexer.go") || !strings.Contains(got, "<file path=\"src/parser/lexer.go\">\npackage parser\n// LEXER-BODY\n</file>") {
		t.Fatalf("sent %q", got)
	}

	// Refusals: one line each, the input stays, nothing is sent.
	p.keys("C-c")
	p.text("look at @link.txt now")
	p.keys("Enter")
	p.waitText("@link.txt: a symlink to " + filepath.Join(outside, "secret.txt") + ", outside the working directory")
	p.keys("C-c")
	p.text("and @blob.bin too")
	p.keys("Enter")
	p.waitText("@blob.bin: a binary file; only text files and PNG, JPEG, GIF or WebP images can be attached; nothing was sent.")
	p.keys("C-c")
	p.text("and @../ too")
	p.keys("Enter")
	p.waitText("@../: outside the working directory")
	if n := len(srv.Requests()); n != 1 {
		t.Fatalf("%d requests after refused mentions, want 1", n)
	}

	p.keys("C-c")
	p.text("what is in @src ?")
	p.keys("Enter")
	p.waitText("saw the listing")
	if got := lastUser(t, srv, 1); !(strings.HasPrefix(got, "what is in @src ?") && strings.Contains(got, "<directory path=\"src/\">\nmain.go\nparser/\n</directory>")) {
		t.Fatalf("sent %q", got)
	}
	b, _ := os.ReadFile(sessionFiles(t, dir)[0])
	if !strings.Contains(string(b), "LEXER-BODY") {
		t.Fatal("the session lacks the attached content")
	}
}

// TestTmuxImages: an @image (and a pasted image path) is checked,
// downscaled past the limits, kept content-addressed beside the sessions,
// named in the message text and sent as an image part; a model that
// rejects it gets a clear line and the session goes on without images; a
// resume sends it again; a file named like an image that is not one is
// refused.
func TestTmuxImages(t *testing.T) {
	needTmux(t)
	srv := providertest.New(t,
		providertest.Reply{Text: "a wide picture"},
		providertest.Reply{Status: 400, Body: `{"error":{"message":"No endpoints found that support image input","code":400}}`},
		providertest.Reply{Text: "text only now"},
		providertest.Reply{Text: "resumed with the picture"},
	)
	dir := t.TempDir()
	wide := goimage.NewRGBA(goimage.Rect(0, 0, 3000, 100))
	for x := 0; x < 3000; x++ {
		for y := 0; y < 100; y++ {
			wide.Set(x, y, color.RGBA{uint8(x), uint8(y), 90, 255})
		}
	}
	var buf bytes.Buffer
	png.Encode(&buf, wide)
	os.WriteFile(filepath.Join(dir, "shot.png"), buf.Bytes(), 0o644)
	os.WriteFile(filepath.Join(dir, "fake.png"), []byte("\x89PNG\r\n\x1a\nnot really"), 0o644)

	bin := programAs(t, "tiny-go")
	p := &tmuxPane{t: t, socket: fmt.Sprintf("tinygo-image-%d", os.Getpid())}
	env := fmt.Sprintf("HOME=%s TERM=tmux-256color OPENROUTER_API_KEY=k OTEL_SDK_DISABLED=true TINY_ENDPOINT=%s", dir, srv.URL())
	script := fmt.Sprintf(`cd %s && %s %s --approval auto; echo EXIT=$?; sleep 60`, dir, env, bin)
	p.tmux("new-session", "-d", "-x", "200", "-y", "50", "-s", "s", "sh", "-c", script)
	t.Cleanup(func() { killTmux(p.socket) })
	p.waitText("(/ lists all)")

	p.text("what is in ")
	p.tmux("set-buffer", "-b", "img", filepath.Join(dir, "shot.png"))
	p.tmux("paste-buffer", "-p", "-b", "img", "-t", "s")
	p.waitText("> what is in @shot.png")
	p.keys("Enter")
	p.waitText("⎿ attached image shot.png (image/png")
	p.waitText("a wide picture")
	msg := lastUserMessage(t, srv, 0)
	var parts []struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		ImageURL struct {
			URL string `json:"url"`
		} `json:"image_url"`
	}
	if err := json.Unmarshal(msg.ContentParts, &parts); err != nil || len(parts) != 2 {
		t.Fatalf("content parts %s: %v", msg.ContentParts, err)
	}
	if !strings.HasPrefix(parts[0].Text, "what is in @shot.png\n\n[image: image-") || !strings.Contains(parts[0].Text, "(2000x66, downscaled, from shot.png)]") {
		t.Fatalf("text part %q", parts[0].Text)
	}
	if !strings.HasPrefix(parts[1].ImageURL.URL, "data:image/jpeg;base64,") {
		t.Fatalf("image part %.60q", parts[1].ImageURL.URL)
	}
	kept, _ := filepath.Glob(filepath.Join(dir, ".tiny-agent", "images", "image-*.jpg"))
	if len(kept) != 1 {
		t.Fatalf("kept images: %v", kept)
	}

	// The model rejects images: one clear line; the session goes on.
	p.text("and the colours?")
	p.keys("Enter")
	p.waitText("the model did not take the image")
	p.text("describe it in words")
	p.keys("Enter")
	p.waitText("text only now")
	if m := lastUserMessage(t, srv, 2); m.Content == nil || len(srv.Requests()[2].Chat.Messages[1].ContentParts) != 0 {
		t.Fatalf("after the rejection images were still sent: %s", srv.Requests()[2].Chat.Messages[1].RawContent)
	}

	// Not an image: refused, nothing sent.
	p.text("and @fake.png ?")
	p.keys("Enter")
	p.waitText("@fake.png: not a readable png image; nothing was sent.")
	if n := len(srv.Requests()); n != 3 {
		t.Fatalf("%d requests", n)
	}
	p.keys("C-c", "C-c", "C-c")
	p.waitText("EXIT=0")

	// A resume sends the image again.
	id := strings.TrimSuffix(filepath.Base(sessionFiles(t, dir)[0]), ".jsonl")
	id = id[strings.LastIndex(id, "_")+1:]
	out, err := exec.Command("sh", "-c", fmt.Sprintf("cd %s && %s %s --approval auto --session %s 'once more'", dir, env, bin, id)).CombinedOutput()
	if err != nil {
		t.Fatalf("resume: %v\n%s", err, out)
	}
	if raw := srv.Requests()[3].Chat.Messages[1].ContentParts; !strings.Contains(string(raw), "data:image/jpeg;base64,") {
		t.Fatalf("the resumed request lacks the image: %.200s", raw)
	}
}

// lastUserMessage is the last user message of request i.
func lastUserMessage(t *testing.T, srv *providertest.Server, i int) providertest.Message {
	t.Helper()
	msgs := srv.Requests()[i].Chat.Messages
	for j := len(msgs) - 1; j >= 0; j-- {
		if msgs[j].Role == "user" {
			return msgs[j]
		}
	}
	t.Fatalf("request %d has no user message", i)
	return providertest.Message{}
}

// TestTmuxShellEscapeCrash: tiny-go is killed (SIGKILL) while a !command
// runs; the next start does not run it again, and its prompt tells the
// model the command was interrupted.
func TestTmuxShellEscapeCrash(t *testing.T) {
	needTmux(t)
	srv := providertest.New(t,
		providertest.Reply{Text: "hello there"},
		providertest.Reply{Text: "noted"},
	)
	dir := t.TempDir()
	bin := programAs(t, "tiny-go")
	p := &tmuxPane{t: t, socket: fmt.Sprintf("tinygo-shcrash-%d", os.Getpid())}
	// The command says it started outside the working directory: its
	// writes there reach the tree only when it ends (the overlay), or,
	// when tiny-go is killed meanwhile, at the next start.
	marks := t.TempDir()
	env := fmt.Sprintf("HOME=%s MARKS=%s TERM=tmux-256color OPENROUTER_API_KEY=k OTEL_SDK_DISABLED=true TINY_ENDPOINT=%s", dir, marks, srv.URL())
	script := fmt.Sprintf(`cd %s && sh -c 'echo $$ > tg.pid; exec env %s %s --approval auto'; echo EXIT=$?; sleep 60`, dir, env, bin)
	p.tmux("new-session", "-d", "-x", "160", "-y", "40", "-s", "s", "sh", "-c", script)
	t.Cleanup(func() { killTmux(p.socket) })
	p.waitText("(/ lists all)")
	p.text("hi")
	p.keys("Enter")
	p.waitText("hello there")

	p.text("!echo run >> runs.txt; touch $MARKS/started; sleep 30")
	p.keys("Enter")
	p.wait("the command to start", func(string) bool { _, err := os.Stat(filepath.Join(marks, "started")); return err == nil })
	var pid int
	fmt.Sscan(strings.TrimSpace(string(mustRead(t, filepath.Join(dir, "tg.pid")))), &pid)
	if pid == 0 {
		t.Fatal("no pid")
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	p.waitText("EXIT=137")

	id := strings.TrimSuffix(filepath.Base(sessionFiles(t, dir)[0]), ".jsonl")
	id = id[strings.LastIndex(id, "_")+1:]
	out, err := exec.Command("sh", "-c", fmt.Sprintf("cd %s && %s %s --approval auto --session %s 'what happened?'", dir, env, bin, id)).CombinedOutput()
	if err != nil {
		t.Fatalf("resume: %v\n%s", err, out)
	}
	got := lastUser(t, srv, 1)
	want := "I ran `echo run >> runs.txt; touch $MARKS/started; sleep 30` in the shell, but tiny-go stopped while it ran: its output is unknown and it was not run again.\n\nwhat happened?"
	if got != want {
		t.Fatalf("prompt after the crash:\n%q\nwant\n%q", got, want)
	}
	if runs := string(mustRead(t, filepath.Join(dir, "runs.txt"))); runs != "run\n" {
		t.Fatalf("the command ran %q", runs)
	}
}

// TestTmuxClearAndResume: /clear starts a new session (the model no
// longer sees the old conversation; the old file stays); /resume lists
// the sessions and switches back, with its recap and its conversation.
func TestTmuxClearAndResume(t *testing.T) {
	needTmux(t)
	srv := providertest.New(t,
		providertest.Reply{Text: "answer one"},
		providertest.Reply{Text: "answer two"},
		providertest.Reply{Text: "answer three"},
	)
	dir := t.TempDir()
	bin := programAs(t, "tiny-go")
	p := &tmuxPane{t: t, socket: fmt.Sprintf("tinygo-clear-%d", os.Getpid())}
	script := fmt.Sprintf(`cd %s && HOME=%s TERM=tmux-256color OPENROUTER_API_KEY=k OTEL_SDK_DISABLED=true TINY_ENDPOINT=%s %s --approval auto; echo EXIT=$?; sleep 60`, dir, dir, srv.URL(), bin)
	p.tmux("new-session", "-d", "-x", "200", "-y", "60", "-s", "s", "sh", "-c", script)
	t.Cleanup(func() { killTmux(p.socket) })
	p.waitText("(/ lists all)")
	p.text("first question")
	p.keys("Enter")
	p.waitText("answer one")
	first := sessionFiles(t, dir)[0]
	firstID := strings.TrimSuffix(first[strings.LastIndex(first, "_")+1:], ".jsonl")

	p.text("/clear")
	p.keys("Enter")
	p.waitText("The previous one is kept: tiny-go --session " + firstID)
	p.text("second question")
	p.keys("Enter")
	p.waitText("answer two")
	if msgs := srv.Requests()[1].Chat.Messages; len(msgs) != 2 || *msgs[1].Content != "second question" {
		t.Fatalf("after /clear the model saw %d messages", len(msgs))
	}

	p.text("/resume")
	p.keys("Enter")
	p.waitText("Sessions of this directory (newest first); /resume <id> switches:")
	p.waitText(firstID + "  first question")
	p.text("/resume " + firstID)
	p.keys("Enter")
	p.waitText("Resumed session " + firstID + ".")
	p.text("third question")
	p.keys("Enter")
	p.waitText("answer three")
	var seen []string
	for _, m := range srv.Requests()[2].Chat.Messages[1:] {
		seen = append(seen, *m.Content)
	}
	if got := strings.Join(seen, " | "); got != "first question | answer one | third question" {
		t.Fatalf("after /resume the model saw %q", got)
	}
	p.keys("C-c", "C-c")
	p.waitText("Resume: tiny-go --session " + firstID)
	p.waitText("EXIT=0")
	if m, _ := filepath.Glob(filepath.Join(dir, ".tiny-agent", "sessions", "*.jsonl")); len(m) != 2 {
		t.Fatalf("%d session files, want 2", len(m))
	}
}
