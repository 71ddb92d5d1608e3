package todo

import (
	"strings"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/session"
)

func TestParse(t *testing.T) {
	l, err := Parse([]byte(`{"todos":[{"content":"Run tests","status":"in_progress","activeForm":"Running tests"},{"content":"Fix","status":"pending"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(l) != 2 || l[0].ActiveForm != "Running tests" || l[1].ActiveForm != "Fix" || !l.Open() {
		t.Fatalf("got %+v", l)
	}
	for _, bad := range []string{
		`{}`, `{"todos":null}`, `{"todos":[{"status":"pending"}]}`,
		`{"todos":[{"content":"a","status":"done"}]}`, `{"todos":[{"content":"a"}]}`, `[1]`,
	} {
		if _, err := Parse([]byte(bad)); err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
}

func TestLines(t *testing.T) {
	got := strings.Join(Lines(List{{"a", Completed, "A"}, {"b", InProgress, "Doing b"}, {"c\x1b[2J", Pending, "C"}}), "|")
	if got != "[x] a|[>] Doing b|[ ] c [2J" {
		t.Fatalf("got %q", got)
	}
}

func TestFromStateTakesTheLastSuccessfulCall(t *testing.T) {
	str := func(s string) *string { return &s }
	call := func(id, args string) session.ToolCall {
		return session.ToolCall{ID: id, Type: "function", Function: session.FunctionCall{Name: ToolName, Arguments: args}}
	}
	st := &session.State{Transcript: []session.Message{
		{Role: session.RoleAssistant, ToolCalls: []session.ToolCall{call("1", `{"todos":[{"content":"first","status":"pending","activeForm":"x"}]}`)}},
		{Role: session.RoleTool, ToolCallID: "1", Content: str(resultText)},
		// A call that failed or was interrupted does not change the list.
		{Role: session.RoleAssistant, ToolCalls: []session.ToolCall{call("2", `{"todos":[{"content":"second","status":"pending","activeForm":"x"}]}`)}},
		{Role: session.RoleTool, ToolCallID: "2", Content: str("Tool execution was interrupted.")},
	}}
	l := FromState(st)
	if len(l) != 1 || l[0].Content != "first" {
		t.Fatalf("got %+v", l)
	}
	if FromState(&session.State{}) != nil {
		t.Fatal("an empty session has a list")
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"todos":[{"content":"a","status":"pending","activeForm":"b"}]}`))
	f.Add([]byte(`{"todos":[]}`))
	f.Add([]byte(`{"todos":[{"content":"a","status":"completed"}],"x":1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := Parse(data)
		if err != nil {
			return
		}
		for _, it := range l {
			if strings.TrimSpace(it.Content) == "" || it.ActiveForm == "" {
				t.Fatalf("accepted an empty item: %+v", it)
			}
			if it.Status != Pending && it.Status != InProgress && it.Status != Completed {
				t.Fatalf("accepted status %q", it.Status)
			}
		}
		if len(Lines(l)) != len(l) {
			t.Fatal("one line per item")
		}
	})
}
