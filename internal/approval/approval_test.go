package approval

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tiny-agent/tiny-go/internal/agent"
)

func TestCommandWords(t *testing.T) {
	cases := []struct {
		command string
		words   []string
		ok      bool
	}{
		{"go test ./...", []string{"go"}, true},
		{"FOO=1 go test", []string{"go"}, true},
		{"cd x && make || echo failed; ls | wc -l &", []string{"cd", "make", "echo", "ls", "wc"}, true},
		{"echo $(rm -rf ~)", []string{"echo", "rm"}, true},
		{"echo `id`", []string{"echo", "id"}, true},
		{"(cd sub; make)", []string{"cd", "make"}, true},
		{"f() { rm -rf /; }; f", []string{"rm", "f"}, true},
		{"go test > out.txt 2>&1", []string{"go"}, true},
		{"$cmd arg", nil, false},
		{"'rm' -rf x", nil, false},
		{"echo 'unterminated", nil, false},
		{"X=1", nil, true},
	}
	for _, c := range cases {
		words, ok := CommandWords(c.command)
		if ok != c.ok || !slices.Equal(words, c.words) {
			t.Errorf("CommandWords(%q) = %q, %v; want %q, %v", c.command, words, ok, c.words, c.ok)
		}
	}
}

func FuzzCommandWords(f *testing.F) {
	for _, s := range []string{"go test", "a && b | c", "echo $(x)", "f() { g; }", "'q' x", "$x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, command string) {
		words, ok := CommandWords(command)
		if !ok && words != nil {
			t.Fatalf("words %q without ok", words)
		}
		for _, w := range words {
			if w == "" {
				t.Fatalf("empty word in %q", words)
			}
		}
	})
}

// script answers prompts in order and records them.
type script struct {
	answers []Answer
	prompts []Prompt
}

func (s *script) ask(_ context.Context, p Prompt) (Answer, error) {
	s.prompts = append(s.prompts, p)
	if len(s.answers) == 0 {
		return Answer{}, errors.New("asked more often than scripted")
	}
	a := s.answers[0]
	s.answers = s.answers[1:]
	return a, nil
}

func bash(command string) agent.ApprovalRequest {
	return agent.ApprovalRequest{Tool: "bash", Display: "bash", Builtin: true, Arguments: jsontext.Value(`{"command":` + strconv.Quote(command) + `}`)}
}

func TestGateAlwaysAllowsCommandsWithTheSameFirstWords(t *testing.T) {
	s := &script{answers: []Answer{{Choice: Always}, {Choice: Once}, {Choice: Deny, Reason: "no"}, {Choice: Once}}}
	g := NewGate(t.TempDir(), s.ask)
	ctx := context.Background()
	decide := func(req agent.ApprovalRequest) agent.Approval {
		t.Helper()
		a, err := g.Approve(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	if a := decide(bash("go test ./...")); !a.Allow {
		t.Fatal("a denied")
	}
	if s.prompts[0].Always != "`go` commands" || s.prompts[0].Action != "Run a command" || s.prompts[0].Detail[0] != "go test ./..." {
		t.Fatalf("prompt = %+v", s.prompts[0])
	}
	// Covered by the rule: not asked.
	if a := decide(bash("go vet ./... | go run ./tool")); !a.Allow || len(s.prompts) != 1 {
		t.Fatalf("go again: %+v after %d prompts", a, len(s.prompts))
	}
	// A second command word is not covered.
	if a := decide(bash("go test && rm -rf /tmp/x")); !a.Allow || len(s.prompts) != 2 {
		t.Fatalf("go && rm: %+v after %d prompts", a, len(s.prompts))
	}
	if s.prompts[1].Always != "`go` and `rm` commands" {
		t.Fatalf("always = %q", s.prompts[1].Always)
	}
	// A hidden command name is never covered; "a" is not offered.
	if a := decide(bash("$(echo go) test")); a.Allow || a.Reason != "no" {
		t.Fatalf("hidden name: %+v", a)
	}
	if s.prompts[2].Always != "" {
		t.Fatalf("always offered for %q", s.prompts[2].Always)
	}
	// bg start has its own rules: bash's "go" does not cover it.
	if a := decide(agent.ApprovalRequest{Tool: "bg", Display: "bg", Builtin: true, Arguments: jsontext.Value(`{"action":"start","command":"go run ."}`)}); !a.Allow || len(s.prompts) != 4 {
		t.Fatalf("bg start: %+v after %d prompts", a, len(s.prompts))
	}
}

func TestGateNeverAsksAboutReads(t *testing.T) {
	s := &script{}
	g := NewGate(t.TempDir(), s.ask)
	for _, req := range []agent.ApprovalRequest{
		{Tool: "read", Display: "read", Builtin: true, Arguments: jsontext.Value(`{"path":"x"}`)},
		{Tool: "bg", Display: "bg", Builtin: true, Arguments: jsontext.Value(`{"action":"list"}`)},
		{Tool: "bg", Display: "bg", Builtin: true, Arguments: jsontext.Value(`{"action":"logs","id":"b1"}`)},
	} {
		if a, err := g.Approve(context.Background(), req); err != nil || !a.Allow {
			t.Fatalf("%s: %+v, %v", req.Arguments, a, err)
		}
	}
	if len(s.prompts) != 0 {
		t.Fatalf("asked %+v", s.prompts)
	}
}

func TestGateShowsADiffForWriteAndEdit(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("one\ntwo\nthree\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := &script{answers: []Answer{{Choice: Once}, {Choice: Once}, {Choice: Once}, {Choice: Always}}}
	g := NewGate(dir, s.ask)
	reqs := []agent.ApprovalRequest{
		{Tool: "edit", Display: "edit", Builtin: true, Arguments: jsontext.Value(`{"path":"notes.txt","edits":[{"oldText":"two","newText":"TWO"}]}`)},
		{Tool: "write", Display: "write", Builtin: true, Arguments: jsontext.Value(`{"path":"new.txt","content":"hello\n"}`)},
		{Tool: "edit", Display: "edit", Builtin: true, Arguments: jsontext.Value(`{"path":"notes.txt","edits":[{"oldText":"absent","newText":"x"}]}`)},
		{Tool: "write", Display: "write", Builtin: true, Arguments: jsontext.Value(`{"path":"notes.txt","content":"one\n"}`)},
	}
	for _, req := range reqs {
		if a, err := g.Approve(context.Background(), req); err != nil || !a.Allow {
			t.Fatalf("%+v, %v", a, err)
		}
	}
	want := []struct {
		action string
		detail string
	}{
		{"Edit notes.txt", "--- a/notes.txt\n+++ b/notes.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three"},
		{"Create new.txt", "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+hello"},
		{"Edit notes.txt", "This call will fail: edits[0].oldText was not found in notes.txt."},
		{"Overwrite notes.txt", "--- a/notes.txt\n+++ b/notes.txt\n@@ -1,3 +1 @@\n one\n-two\n-three"},
	}
	for i, w := range want {
		p := s.prompts[i]
		if p.Action != w.action || strings.Join(p.Detail, "\n") != w.detail {
			t.Errorf("prompt %d = %q\n%s\nwant %q\n%s", i, p.Action, strings.Join(p.Detail, "\n"), w.action, w.detail)
		}
	}
	// "a" on write covers every later write.
	if a, err := g.Approve(context.Background(), reqs[1]); err != nil || !a.Allow || len(s.prompts) != 4 {
		t.Fatalf("write after always: %+v, %v, %d prompts", a, err, len(s.prompts))
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "notes.txt")); string(b) != "one\ntwo\nthree\n" {
		t.Fatalf("a preview changed the file: %q", b)
	}
}

func TestGateShowsMCPToolAndArguments(t *testing.T) {
	s := &script{answers: []Answer{{Choice: Always}}}
	g := NewGate(t.TempDir(), s.ask)
	req := agent.ApprovalRequest{Tool: "files__delete", Display: "mcp:files/delete", Arguments: jsontext.Value(`{"path":"/etc/passwd","force":true}`)}
	for range 2 {
		if a, err := g.Approve(context.Background(), req); err != nil || !a.Allow {
			t.Fatalf("%+v, %v", a, err)
		}
	}
	if len(s.prompts) != 1 {
		t.Fatalf("%d prompts, want 1", len(s.prompts))
	}
	p := s.prompts[0]
	if p.Action != "Call the MCP tool mcp:files/delete" || strings.Join(p.Detail, "\n") != "{\n  \"path\": \"/etc/passwd\",\n  \"force\": true\n}" {
		t.Fatalf("prompt = %+v", p)
	}
}

func TestGateAskErrorAndLongDetail(t *testing.T) {
	g := NewGate(t.TempDir(), func(ctx context.Context, p Prompt) (Answer, error) { return Answer{}, context.Canceled })
	if _, err := g.Approve(context.Background(), bash("ls")); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	long := strings.Repeat("echo x\n", maxDetailLines+10)
	c := commandCall("bash", "Run a command", long)
	if n := len(c.prompt.Detail); n != maxDetailLines+1 || c.prompt.Detail[n-1] != "… 11 more lines" {
		t.Fatalf("%d lines, last %q", n, c.prompt.Detail[n-1])
	}
}

func TestParseMode(t *testing.T) {
	for in, want := range map[string]Mode{"ask": Ask, "auto": Auto} {
		if m, err := ParseMode(in); err != nil || m != want {
			t.Errorf("ParseMode(%q) = %q, %v", in, m, err)
		}
	}
	if _, err := ParseMode("yolo"); err == nil {
		t.Error("yolo accepted")
	}
}

// TestGateAlwaysCoversOnlyWhatItSaid: "a" on bg stop does not cover bg
// start, and "a" on write does not cover edit or bash.
func TestGateAlwaysCoversOnlyWhatItSaid(t *testing.T) {
	dir := t.TempDir()
	s := &script{answers: []Answer{{Choice: Always}, {Choice: Always}, {Choice: Once}, {Choice: Once}, {Choice: Once}}}
	g := NewGate(dir, s.ask)
	reqs := []agent.ApprovalRequest{
		{Tool: "bg", Display: "bg", Builtin: true, Arguments: jsontext.Value(`{"action":"stop","id":"b1"}`)},
		{Tool: "write", Display: "write", Builtin: true, Arguments: jsontext.Value(`{"path":"a.txt","content":"x"}`)},
		{Tool: "bg", Display: "bg", Builtin: true, Arguments: jsontext.Value(`{"action":"start","command":"sleep 1"}`)},
		{Tool: "edit", Display: "edit", Builtin: true, Arguments: jsontext.Value(`{"path":"a.txt","edits":[{"oldText":"x","newText":"y"}]}`)},
		bash("write x"),
		{Tool: "bg", Display: "bg", Builtin: true, Arguments: jsontext.Value(`{"action":"stop","id":"b2"}`)},
		{Tool: "write", Display: "write", Builtin: true, Arguments: jsontext.Value(`{"path":"b.txt","content":"y"}`)},
	}
	for _, req := range reqs {
		if a, err := g.Approve(context.Background(), req); err != nil || !a.Allow {
			t.Fatalf("%s: %+v, %v", req.Arguments, a, err)
		}
	}
	var asked []string
	for _, p := range s.prompts {
		asked = append(asked, p.Action)
	}
	want := "Stop the background process b1|Create a.txt|Start a background command|Edit a.txt|Run a command"
	if got := strings.Join(asked, "|"); got != want {
		t.Fatalf("asked %s\nwant  %s", got, want)
	}
}

// A web search asks with its query (it leaves the machine), and always
// allows every search after.
func TestGateShowsWebSearchQuery(t *testing.T) {
	s := &script{answers: []Answer{{Choice: Always}}}
	g := NewGate(t.TempDir(), s.ask)
	for _, q := range []string{"go 1.25 release", "another"} {
		req := agent.ApprovalRequest{Tool: "web_search", Display: "web_search", Builtin: true, Arguments: jsontext.Value(`{"query":"` + q + `"}`)}
		if a, err := g.Approve(context.Background(), req); err != nil || !a.Allow {
			t.Fatalf("%+v, %v", a, err)
		}
	}
	if len(s.prompts) != 1 {
		t.Fatalf("%d prompts, want 1", len(s.prompts))
	}
	if p := s.prompts[0]; p.Action != "Search the web" || strings.Join(p.Detail, "\n") != "go 1.25 release" || p.Always != "every web search" {
		t.Fatalf("prompt = %+v", p)
	}
}

// TestAllowedInWords: /permissions lists the session's "always" answers
// as a user would say them.
func TestAllowedInWords(t *testing.T) {
	g := NewGate(t.TempDir(), nil)
	g.rules["bash\x00cmd\x00go"] = true
	g.rules["write\x00tool"] = true
	g.rules["bg\x00stop"] = true
	got := strings.Join(g.Allowed(), "|")
	if want := "bash: `go` commands|bg: stop|every write call"; got != want {
		t.Fatalf("Allowed() = %q, want %q", got, want)
	}
	if (*Gate)(nil).Allowed() != nil {
		t.Fatal("a nil gate allows something")
	}
}

// TestAskerNamed: a question asked on behalf of a subagent names it.
func TestAskerNamed(t *testing.T) {
	var got Prompt
	g := NewGate(t.TempDir(), func(_ context.Context, p Prompt) (Answer, error) { got = p; return Answer{Choice: Once}, nil })
	req := agent.ApprovalRequest{Tool: "bash", Display: "bash", Builtin: true, Arguments: jsontext.Value(`{"command":"rm -rf build"}`)}
	if _, err := g.Approve(WithAsker(context.Background(), "explore subagent"), req); err != nil {
		t.Fatal(err)
	}
	if got.Asker != "explore subagent" {
		t.Fatalf("prompt %+v does not name the subagent", got)
	}
	if _, err := g.Approve(context.Background(), req); err != nil || got.Asker != "" {
		t.Fatalf("the session's own question names %q (%v)", got.Asker, err)
	}
	// So does a review of what a subagent's command changed.
	if _, err := g.Review(WithAsker(context.Background(), "explore subagent"), "make", []string{"added     a.txt"}); err != nil || got.Asker != "explore subagent" {
		t.Fatalf("the review names %q (%v)", got.Asker, err)
	}
}
