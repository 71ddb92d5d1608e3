package headless

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/approval"
	"github.com/tiny-agent/tiny-go/internal/cctools"
)

func TestParseLine(t *testing.T) {
	ok := map[string]Kind{
		`{"type":"user","message":{"role":"user","content":"hi"}}`:                                                    KindUser,
		`{"type":"user","message":{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}}`: KindUser,
		`{"type":"control_request","request_id":"1","request":{"subtype":"interrupt"}}`:                               KindControlRequest,
		`{"type":"control_response","response":{"subtype":"success","request_id":"1","response":{}}}`:                 KindControlResponse,
		`{"type":"control_cancel_request","request_id":"1"}`:                                                          KindControlCancel,
		`{"type":"keep_alive"}`: KindIgnored,
	}
	for line, want := range ok {
		l, err := ParseLine([]byte(line))
		if err != nil || l.Kind != want {
			t.Errorf("%s: kind %v, %v; want %v", line, l.Kind, err, want)
		}
	}
	l, _ := ParseLine([]byte(`{"type":"user","message":{"role":"user","content":[{"type":"text","text":"a"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"aGk="}}]}}`))
	if l.User == nil || l.User.Text != "a" || len(l.User.Images) != 1 || string(l.User.Images[0].Data) != "hi" {
		t.Errorf("image message = %+v", l.User)
	}
	bad := map[string]string{
		`not json`:       "not a JSON object",
		`{"type":"user"`: "not valid JSON",
		`{"message":{}}`: `no "type"`,
		`{"type":"user","message":{"role":"user","content":42}}`:                                         "string or an array",
		`{"type":"user","message":{"role":"assistant","content":"x"}}`:                                   "role",
		`{"type":"user","message":{"role":"user","content":[{"type":"document"}]}}`:                      "not supported",
		`{"type":"user","message":{"role":"user","content":[{"type":"image","source":{"type":"url"}}]}}`: "base64",
		`{"type":"control_request","request":{"subtype":"interrupt"}}`:                                   "request_id",
		`{"type":"control_request","request_id":"1","request":{}}`:                                       "subtype",
		`{"type":"control_response","response":{"subtype":"maybe","request_id":"1"}}`:                    "success or error",
	}
	for line, want := range bad {
		if _, err := ParseLine([]byte(line)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v; want one mentioning %q", line, err, want)
		}
	}
}

func TestSplitRulesAndDecide(t *testing.T) {
	got := SplitRules([]string{"Bash(git diff:*),Read Edit", "mcp__a__b"})
	if strings.Join(got, "|") != "Bash(git diff:*)|Read|Edit|mcp__a__b" {
		t.Fatalf("SplitRules = %q", got)
	}
	bash := func(cmd string) cctools.Call {
		return cctools.Call{Name: cctools.Bash, Input: jsontext.Value(`{"command":` + strconv.Quote(cmd) + `}`)}
	}
	dir := t.TempDir()
	edit := cctools.Call{Name: cctools.Edit, Input: jsontext.Value(`{"file_path":` + strconv.Quote(filepath.Join(dir, "src", "a.go")) + `}`)}
	editOut := cctools.Call{Name: cctools.Edit, Input: jsontext.Value(`{"file_path":"/etc/passwd"}`)}
	rules := Rules{Allow: []string{"Bash(git diff:*)", "Bash(make)", "WebFetch(domain:docs.python.org)"}, Deny: []string{"Bash(rm:*)", "WebFetch(domain:*.evil.example)"}}
	fetch := func(url string) cctools.Call {
		return cctools.Call{Name: cctools.WebFetch, Input: jsontext.Value(`{"url":"` + url + `"}`)}
	}
	cases := []struct {
		mode   Mode
		prompt bool
		call   cctools.Call
		want   decision
	}{
		{ModeDefault, false, bash("git diff --stat"), allow},
		{ModeDefault, false, bash("git diffx"), deny},
		{ModeDefault, false, bash("make"), allow},
		{ModeDefault, false, bash("make all"), deny},
		{ModeDefault, true, bash("ls"), askSDK},
		{ModeBypass, false, bash("rm -rf x"), deny},
		{ModeBypass, false, bash("ls"), allow},
		{ModeAcceptEdits, true, edit, allow},
		{ModeAcceptEdits, true, editOut, askSDK},
		{ModeAcceptEdits, true, bash("ls"), askSDK},
		{ModeAcceptEdits, false, bash("touch made.txt"), allow},
		{ModeAcceptEdits, false, bash("mkdir -p a/b"), allow},
		{ModeAcceptEdits, false, bash("mv a b/c"), allow},
		{ModeAcceptEdits, false, bash("sed -i s/x/y/ f.txt"), allow},
		{ModeAcceptEdits, false, bash("touch /tmp/x"), deny},
		{ModeAcceptEdits, false, bash("touch ../x"), deny},
		{ModeAcceptEdits, false, bash("touch a; curl x"), deny},
		{ModeAcceptEdits, false, bash("touch $HOME/x"), deny},
		{ModeAcceptEdits, false, bash("rm -rf"), deny},
		{ModeAcceptEdits, false, bash("sed -e s/x/y/ -f /etc/x f"), deny},
		{ModeAcceptEdits, false, bash("sed -i s/x/y/w/tmp/out f.txt"), deny},
		{ModeAcceptEdits, false, bash("mkdir d && touch d/f"), allow},
		{ModeAcceptEdits, false, bash("touch .git/hooks/pre-commit"), deny},
		{ModeAuto, false, bash("ls"), deny},
		{ModeAuto, true, bash("ls"), askSDK},
		{ModePlan, true, edit, deny},
		{ModeDontAsk, true, bash("ls"), deny},
		{ModeDefault, true, fetch("https://docs.python.org/3/"), allow},
		{ModeDefault, true, fetch("https://pypi.org/"), askSDK},
		{ModeBypass, false, fetch("https://a.evil.example/"), deny},
	}
	for _, c := range cases {
		// The edits mode's one check, on the tiny-go call the Claude Code
		// one stands for, as Ask makes it.
		tool, args, err := cctools.TinyCall(c.call)
		if err != nil {
			t.Fatal(err)
		}
		edits := approval.EditsInside(agent.ApprovalRequest{Tool: tool, Builtin: true, Arguments: args}, dir)
		if got, _ := decide(c.mode, rules, c.prompt, c.call, edits); got != c.want {
			t.Errorf("decide(%s, %s) = %v, want %v", c.mode, c.call.Input, got, c.want)
		}
	}
}

// FuzzParseLine: no input line panics the parser, and a line it accepts
// has the parts its kind promises.
func FuzzParseLine(f *testing.F) {
	for _, s := range []string{
		`{"type":"user","message":{"role":"user","content":"hi"}}`,
		`{"type":"user","message":{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"aGk="}}]}}`,
		`{"type":"control_request","request_id":"1","request":{"subtype":"can_use_tool","input":{}}}`,
		`{"type":"control_response","response":{"subtype":"error","request_id":"1","error":"x"}}`,
		`{"type":"control_cancel_request","request_id":"1"}`,
		`{"type":"x"}`, `{}`, `[]`, `{"type":"user","message":null}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		l, err := ParseLine(line)
		if err != nil {
			return
		}
		switch l.Kind {
		case KindUser:
			if l.User == nil {
				t.Fatal("a user line without its message")
			}
		case KindControlRequest:
			if l.Request == nil || l.Request.ID == "" || l.Request.Subtype == "" {
				t.Fatal("a control request without id or subtype")
			}
		case KindControlResponse:
			if l.Response == nil || l.Response.ID == "" {
				t.Fatal("a control response without id")
			}
		case KindControlCancel:
			if l.CancelID == "" {
				t.Fatal("a cancel without id")
			}
		case KindIgnored:
			if l.Type == "" {
				t.Fatal("an ignored line without type")
			}
		default:
			t.Fatalf("kind %v", l.Kind)
		}
	})
}
