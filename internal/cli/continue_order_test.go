package cli

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tiny-agent/tiny-go/internal/cli/assemble"
	"github.com/tiny-agent/tiny-go/internal/providertest"
	"github.com/tiny-agent/tiny-go/internal/store"
)

// --continue finds the newest session from the headers alone, in `session
// list`'s order: a fork made later of an older session counts by its
// source's date, so the newer session is continued; once the fork is
// corrupt it counts by its file's date, and --continue names it.
func TestContinueOrdersLikeTheList(t *testing.T) {
	srv := providertest.New(t, providertest.Reply{Text: "a"}, providertest.Reply{Text: "b"}, providertest.Reply{Text: "c"})
	c := newCLI(t, srv)
	if code, _, stderr := c.main("", "first"); code != 0 {
		t.Fatalf("first: %s", stderr)
	}
	older, _ := store.IDOfPath(c.sessions()[0])
	time.Sleep(5 * time.Millisecond) // a later createdAt
	if code, _, stderr := c.main("", "second"); code != 0 {
		t.Fatalf("second: %s", stderr)
	}
	code, out, stderr := c.main("", "session", "fork", older)
	if code != 0 {
		t.Fatalf("fork: %s", stderr)
	}
	forkID := strings.TrimSpace(out[strings.LastIndex(out, "--session ")+len("--session "):])
	var newer, forkPath string
	for _, p := range c.sessions() {
		switch id, _ := store.IDOfPath(p); id {
		case older:
		case forkID:
			forkPath = p
		default:
			newer = id
		}
	}
	listed := func() string {
		list, err := store.List(c.dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range list {
			if !assemble.HeaderOnly(s) {
				return s.ID
			}
		}
		return ""
	}
	if got := listed(); got != newer {
		t.Fatalf("the list puts %s first, want %s", got, newer)
	}
	code, stdout, stderr := c.main("", "--continue", "--json", "third")
	if code != 0 || !strings.Contains(stdout, newer) {
		t.Fatalf("--continue did not resume %s: %d\n%s%s", newer, code, stdout, stderr)
	}

	f, err := os.OpenFile(forkPath, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("not json\n")
	f.Close()
	if got := listed(); got != forkID {
		t.Fatalf("the list puts %s first, want the corrupt fork %s", got, forkID)
	}
	code, _, stderr = c.main("", "--continue", "fourth")
	if code == 0 || !strings.Contains(stderr, "--continue: the newest session "+forkID) {
		t.Fatalf("--continue with a corrupt later fork: %d %s", code, stderr)
	}
}

// A session whose only input was a !command holds just its header and the
// shell journal beside it: --continue still finds it, and the command's
// output reaches the model with the next prompt.
func TestContinueFindsAShellOnlySession(t *testing.T) {
	srv := providertest.New(t, providertest.Reply{Text: "seen"})
	c := newCLI(t, srv)
	if code, _, stderr := c.main("!echo shell-only-output\n"); code != 0 {
		t.Fatalf("interactive !command: %d %s", code, stderr)
	}
	if n := len(c.sessions()); n != 1 {
		t.Fatalf("%d sessions after a !command alone, want 1 (it is kept)", n)
	}
	code, stdout, stderr := c.main("", "--continue", "what did I run?")
	if code != 0 {
		t.Fatalf("--continue: %d\n%s%s", code, stdout, stderr)
	}
	if n := len(c.sessions()); n != 1 {
		t.Errorf("%d sessions after --continue, want the same one", n)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 || !strings.Contains(string(reqs[0].Body), "shell-only-output") {
		t.Errorf("the model did not see the !command's output: %d requests", len(reqs))
	}
}
