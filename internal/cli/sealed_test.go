package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/providertest"
)

// --approval review runs the command it shows sealed: it may change the
// tree (the review shows that) and its own temporary directory, but not
// a folder outside the project that commands may write in other modes,
// and a "no" leaves nothing behind anywhere. The preview says so.
func TestReviewRunsTheCommandSealed(t *testing.T) {
	for _, answer := range []string{"n", "y"} {
		t.Run(answer, func(t *testing.T) {
			outside := t.TempDir() // writable for commands in every other mode
			cmd := fmt.Sprintf(`echo in > in.txt; echo out > %q/escaped.txt; echo t > "$TMPDIR/t.txt" && echo tmp-ok; echo "$TMPDIR" > tmpdir.txt`, outside)
			srv := providertest.New(t,
				providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c1", "bash", mustJSON(t, map[string]string{"command": cmd}))}},
				providertest.Reply{Text: "done"},
			)
			c := newCLI(t, srv)
			code, _, stderr := c.main(answer+"\n", "--approval", "review", "go")
			if _, err := os.Stat(filepath.Join(outside, "escaped.txt")); err == nil {
				t.Fatal("a sealed command wrote outside the project")
			}
			for _, want := range []string{"Apply what this command changed", "ran sealed: network off, nothing outside the project writable", "added     in.txt"} {
				if !strings.Contains(stderr, want) {
					t.Fatalf("the review lacks %q:\n%s", want, stderr)
				}
			}
			got := toolMessage(srv.Requests()[1], "c1")
			if !strings.Contains(got, "tmp-ok") || !strings.Contains(got, "escaped.txt") {
				t.Fatalf("the command's own temporary directory, or the refusal, is not in its result: %q", got)
			}
			_, err := os.Stat(filepath.Join(c.dir, "in.txt"))
			if applied := err == nil; applied != (answer == "y") || answer == "y" && code != 0 {
				t.Fatalf("answer %s: in.txt applied %v, exit %d: %s", answer, applied, code, stderr)
			}
			if answer == "y" {
				tmp, _ := os.ReadFile(filepath.Join(c.dir, "tmpdir.txt"))
				if dir := strings.TrimSpace(string(tmp)); dir == "" || dirExists(dir) {
					t.Fatalf("the sealed command's temporary directory %q outlived it", dir)
				}
			}
		})
	}
}

// A command that needs more than a sealed run (the network, here curl) is
// asked about before it runs, as in ask mode: a "no" means it never ran.
func TestReviewAsksFirstForWhatASealedRunCannotServe(t *testing.T) {
	cmd := "curl -s http://127.0.0.1:9/ ; echo ran > ran.txt"
	srv := providertest.New(t,
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c1", "bash", mustJSON(t, map[string]string{"command": cmd}))}},
		providertest.Reply{Text: "done"},
	)
	c := newCLI(t, srv)
	_, _, stderr := c.main("n\n", "--approval", "review", "go")
	if !strings.Contains(stderr, "$ "+cmd) && !strings.Contains(stderr, cmd) {
		t.Fatalf("not asked before it ran:\n%s", stderr)
	}
	if strings.Contains(stderr, "Apply what this command changed") {
		t.Fatalf("it ran and was reviewed after:\n%s", stderr)
	}
	if _, err := os.Stat(filepath.Join(c.dir, "ran.txt")); err == nil {
		t.Fatal("the denied command ran")
	}
}

func dirExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}
