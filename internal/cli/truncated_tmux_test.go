package cli

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/providertest"
	"github.com/tiny-agent/tiny-go/internal/store/storetest"
)

// panePID is the pid of the program the pane's shell runs.
func (p *tmuxPane) panePID() int {
	p.t.Helper()
	sh := strings.TrimSpace(p.tmux("display-message", "-p", "-t", "s", "#{pane_pid}"))
	b, err := os.ReadFile("/proc/" + sh + "/task/" + sh + "/children")
	if err != nil {
		p.t.Fatal(err)
	}
	f := strings.Fields(string(b))
	if len(f) != 1 {
		p.t.Fatalf("the pane's shell runs %q", f)
	}
	pid, _ := strconv.Atoi(f[0])
	return pid
}

// sessionMappings counts pid's mappings of session files.
func sessionMappings(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/maps")
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "/.tiny-agent/sessions/")
}

// An interactive tiny-go that resumes a session and switches to two
// others (/resume) holds no mapping of any of them. When another program
// truncates the session in use between two turns (`truncate -s`), the
// next prompt gets one line saying so, nothing is written to the file,
// and tiny-go goes on: it resumes another session and answers there.
// (Before: the next prompt faulted on the mapped file, SIGBUS.)
func TestTmuxSessionTruncatedBetweenTurns(t *testing.T) {
	needTmux(t)
	srv := providertest.New(t, providertest.Reply{Text: "still here"})
	dir := t.TempDir()
	paths := storetest.InstallGenerated(t, dir, 3, 3000)
	ids := make([]string, len(paths))
	for i, path := range paths {
		ids[i] = storetest.SessionID(path)
	}
	bin := programAs(t, "tiny-go")
	p := &tmuxPane{t: t, socket: fmt.Sprintf("tinygo-truncated-%d", os.Getpid())}
	script := fmt.Sprintf(`cd %s && HOME=%s TERM=tmux-256color OPENROUTER_API_KEY=k OTEL_SDK_DISABLED=true TINY_ENDPOINT=%s %s --session %s; echo EXIT=$?; sleep 60`, dir, dir, srv.URL(), bin, ids[0])
	p.tmux("new-session", "-d", "-x", "200", "-y", "60", "-s", "s", "sh", "-c", script)
	t.Cleanup(func() { killTmux(p.socket) })
	p.waitText("── resumed ──")
	pid := p.panePID()
	if n := sessionMappings(t, pid); n != 0 {
		t.Fatalf("after the resume tiny-go maps %d session files", n)
	}
	for _, id := range ids[1:] {
		p.text("/resume " + id)
		p.keys("Enter")
		p.waitText("Resumed session " + id + ".")
		if n := sessionMappings(t, pid); n != 0 {
			t.Fatalf("after /resume %s tiny-go maps %d session files", id, n)
		}
	}

	cut := int64(4096)
	fi, err := os.Stat(paths[2])
	if err != nil {
		t.Fatal(err)
	}
	size := fi.Size()
	if out, err := exec.Command("truncate", "-s", strconv.FormatInt(cut, 10), paths[2]).CombinedOutput(); err != nil {
		t.Fatalf("truncate: %v %s", err, out)
	}
	p.text("hello again")
	p.keys("Enter")
	line := fmt.Sprintf("was truncated to %d bytes (%d were committed); stopping without writing more to it: the lines cut off cannot be restored; fork the session or start a new one", cut, size)
	// The line wraps on the screen: compare without the spaces.
	squeeze := func(s string) string { return strings.Join(strings.Fields(s), "") }
	p.wait(line, func(s string) bool { return strings.Contains(squeeze(s), squeeze(line)) })
	if fi, err := os.Stat(paths[2]); err != nil || fi.Size() != cut {
		t.Fatalf("tiny-go wrote to the truncated file: %v", err)
	}
	p.text("/resume " + ids[0])
	p.keys("Enter")
	p.waitText("Resumed session " + ids[0] + ".")
	p.text("and now?")
	p.keys("Enter")
	p.waitText("still here")
	if s := p.screen(); strings.Contains(s, "EXIT=") || strings.Contains(s, "fatal error") {
		t.Fatalf("tiny-go ended:\n%s", s)
	}
	p.keys("C-c", "C-c")
	p.waitText("EXIT=0")
}
