package approval

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tiny-agent/tiny-go/internal/agent"
)

func TestFileCommandInside(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "away")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "gone"), filepath.Join(dir, "dangling")); err != nil {
		t.Fatal(err)
	}
	cases := map[string]bool{
		"touch a.txt":                         true,
		"mkdir -p sub/d && touch sub/d/x":     true,
		"mv a.txt 'b c.txt'; cp -r sub \"d\"": true,
		"rm -f *.o sub/*.tmp":                 true,
		"mv sub/x .":                          true,
		"cp a " + filepath.Join(dir, "sub"):   true,
		"rmdir sub || true":                   false, // true is not a file command
		"touch ../x":                          false,
		"touch /etc/x":                        false,
		"cp a " + outside:                     false,
		"touch away/x":                        false, // a link out of the tree
		"touch dangling":                      false,
		"touch .git/hooks/pre-commit":         false,
		"rm -rf .tiny-agent":                  false,
		"rm -rf .":                            false,
		"rm -rf " + dir:                       false,
		"rm -rf .*":                           false,
		"touch $HOME/x":                       false,
		"touch $(echo x)":                     false,
		"touch {../x,y}":                      false,
		"touch ~/x":                           false,
		"touch a > /tmp/x":                    false,
		"FOO=1 touch a":                       false,
		"cp -t/etc a":                         false,
		"cp --target-directory=/etc a":        false,
		"cp --target-directory=sub a":         true,
		"cat a | touch b":                     false,
		"echo hi":                             false,
		"sed -i s/a/b/ a":                     true,
		"sed -i -E 's/a b/c/g' a sub/x":       true,
		"sed -n s/a/b/p a":                    true,
		"sed -i s/a/b/w/tmp/out a":            false, // writes elsewhere
		"sed -i 's/a/b/e' a":                  false, // runs the pattern space
		"sed -i 's/a/b/;w /tmp/x' a":          false,
		"sed -i 1d a":                         false, // not a substitution
		"sed -e s/x/y/ -f /etc/x a":           false,
		"sed -i.bak s/a/b/ a":                 false,
		"sed -i s/a/b/ /etc/passwd":           false,
		"sed -i s/a/b/ .git/config":           false,
		"sed -i s/a/b/":                       false, // no file
		"sed -i s/a*/b/ a":                    false, // a glob the shell may expand
		"":                                    false,
		"touch 'a":                            false,
		"touch a\\ b":                         false,
		"(mkdir x; touch x/y)":                true,
		"! touch a":                           false,
		"for f in a b; do touch $f; done":     false,
		"mkdir -m 700 private":                true,
	}
	for cmd, want := range cases {
		if got := FileCommandInside(cmd, dir); got != want {
			t.Errorf("FileCommandInside(%q) = %v, want %v", cmd, got, want)
		}
	}
}

// Edits mode lets file edits and file commands inside the working
// directory run, and asks about everything else.
func TestGateAcceptsEdits(t *testing.T) {
	dir := t.TempDir()
	asked := 0
	g := NewGate(dir, func(context.Context, Prompt) (Answer, error) {
		asked++
		return Answer{Choice: Deny}, nil
	})
	sw := NewSwitch(Edits)
	g.AcceptEditsWhile(func() bool { return sw.Mode() == Edits })
	hook := sw.Hook(g.Approve)
	req := func(tool, args string) agent.ApprovalRequest {
		return agent.ApprovalRequest{Tool: tool, Display: tool, Builtin: true, Arguments: jsontext.Value(args)}
	}
	ctx := context.Background()
	for _, r := range []agent.ApprovalRequest{
		req("write", `{"path":"notes.txt","content":"x"}`),
		req("edit", `{"path":"`+filepath.Join(dir, "a.go")+`","edits":[]}`),
		req("bash", `{"command":"mkdir -p d && touch d/x && mv d e"}`),
	} {
		if a, err := hook(ctx, r); err != nil || !a.Allow || asked != 0 {
			t.Fatalf("%s %s: %+v, %v, asked %d", r.Tool, r.Arguments, a, err, asked)
		}
	}
	for i, r := range []agent.ApprovalRequest{
		req("write", `{"path":"../notes.txt","content":"x"}`),
		req("bash", `{"command":"go test ./..."}`),
		req("bash", `{"command":"touch /tmp/x"}`),
		{Tool: "write", Display: "mcp:x/write", Arguments: jsontext.Value(`{"path":"a"}`)},
	} {
		if a, _ := hook(ctx, r); a.Allow || asked != i+1 {
			t.Fatalf("%s %s ran without asking", r.Tool, r.Arguments)
		}
	}
	// Shift+Tab: edits -> auto -> plan -> edits; in ask mode edits are
	// asked about.
	if sw.Next() != Auto || sw.Next() != Plan || sw.Next() != Edits {
		t.Fatal("the cycle of a session started in edits mode is edits -> auto -> plan -> edits")
	}
	sw.Set(Ask)
	if a, _ := hook(ctx, req("bash", `{"command":"touch a"}`)); a.Allow {
		t.Fatal("ask mode let a file command run")
	}
}
