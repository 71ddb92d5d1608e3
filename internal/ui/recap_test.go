package ui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/session"
)

func TestRecapShowsTheLastTurns(t *testing.T) {
	str := func(s string) *string { return &s }
	var tr []session.Message
	for _, p := range []string{"one", "two", "three", "four"} {
		tr = append(tr, session.Message{Role: session.RoleUser, Content: str("prompt " + p)})
		tr = append(tr, session.Message{Role: session.RoleAssistant, Content: str("Looking."), ToolCalls: []session.ToolCall{{ID: "c-" + p, Type: "function", Function: session.FunctionCall{Name: "bash", Arguments: `{"command":"ls ` + p + `"}`}}}})
		tr = append(tr, session.Message{Role: session.RoleTool, ToolCallID: "c-" + p, Content: str("a\nb\n")})
		tr = append(tr, session.Message{Role: session.RoleAssistant, Content: str("Answer **" + p + "**.")})
	}
	got := stripANSI(strings.Join(recapLines(tr, 80, &markdown{}, plainStyles(), func(s string) string { return s }), "\n"))
	for _, want := range []string{"… earlier turns", "> prompt two", "◆ bash ls two\n  └ 4 chars", "Answer two.", "> prompt four", "Answer four.", "── resumed ──"} {
		if !strings.Contains(got, want) {
			t.Errorf("recap lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "prompt one") {
		t.Errorf("recap shows more than the last %d turns:\n%s", recapTurns, got)
	}
	if recapLines(nil, 80, nil, plainStyles(), nil) != nil {
		t.Error("an empty transcript shows a recap")
	}
}

// A compacted session resumed by the store passes its active context: the
// summary is one line, never shown as a prompt or counted as a turn.
func TestRecapOfACompactedSession(t *testing.T) {
	str := func(s string) *string { return &s }
	ctx := []session.Message{
		{Role: session.RoleUser, Content: str(session.CompactedHistoryPrefix + "The user listed files.")},
		{Role: session.RoleUser, Content: str("prompt five")},
		{Role: session.RoleAssistant, Content: str("Answer five.")},
	}
	got := stripANSI(strings.Join(recapLines(ctx, 80, nil, plainStyles(), func(s string) string { return s }), "\n"))
	for _, want := range []string{"… earlier turns were compacted", "> prompt five", "Answer five."} {
		if !strings.Contains(got, want) {
			t.Errorf("recap lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "listed files") || strings.Contains(got, "in its file") {
		t.Errorf("recap shows the summary as a turn:\n%s", got)
	}
	if recapLines(ctx[:1], 80, nil, plainStyles(), nil) != nil {
		t.Error("a context of just the summary shows a recap")
	}
}

// Each replayed call shows what really happened to it, in the words the
// live tool log uses, never "N chars" for a call that did not run.
func TestRecapShowsEachCallsRealOutcome(t *testing.T) {
	str := func(s string) *string { return &s }
	calls := []struct{ id, command, content, want string }{
		{"c1", "rm -rf build", session.ContentAborted, "◆ bash rm -rf build\n  └ interrupted before it started"},
		{"c2", "make deploy", session.ContentInterrupted, "◆ bash make deploy\n  └ interrupted while running"},
		{"c3", "git push", "Error: The user denied this tool call; it was not executed.\nReason given by the user: not yet", "◆ bash git push\n  └ denied: not yet"},
		{"c4", "go test", "FAIL x\n\nCommand exited with code 2", "◆ bash go test\n  └ exit code 2"},
		{"c5", "ls", "a\nb", "◆ bash ls\n  └ 3 chars"},
	}
	tr := []session.Message{{Role: session.RoleUser, Content: str("go")}}
	for _, c := range calls {
		tr = append(tr,
			session.Message{Role: session.RoleAssistant, ToolCalls: []session.ToolCall{{ID: c.id, Type: "function", Function: session.FunctionCall{Name: "bash", Arguments: `{"command":"` + c.command + `"}`}}}},
			session.Message{Role: session.RoleTool, ToolCallID: c.id, Content: str(c.content)})
	}
	got := stripANSI(strings.Join(recapLines(tr, 80, nil, plainStyles(), func(s string) string { return s }), "\n"))
	for _, c := range calls {
		if !strings.Contains(got, c.want) {
			t.Errorf("recap lacks %q:\n%s", c.want, got)
		}
	}
}

// The live log of a command the user interrupted: their words, how long it
// ran, its last lines and where the full output is; the model's fixed text
// is not shown.
func TestInterruptedCallShowsItsPartialOutput(t *testing.T) {
	var out []string
	for i := 1; i <= 30; i++ {
		out = append(out, fmt.Sprintf("line %d", i))
	}
	partial := strings.Join(out[20:], "\n") + "\n\n[Showing lines 21-30 of 30. Full output: /w/.tiny-agent/tool-output/x.log]\n\nCommand aborted."
	r := buildReport(agent.ToolInfo{Tool: "bash"}, agent.ToolOutcome{Outcome: "cancelled", Content: session.ContentInterrupted, Duration: 3200 * time.Millisecond, Partial: partial}, nil)
	got := strings.Join(r.lines(80, plainStyles()), "\n")
	for _, want := range []string{"└ interrupted by you after 3 s", "… 6 earlier lines", "    line 27\n", "    line 30\n", "full output: /w/.tiny-agent/tool-output/x.log"} {
		if !strings.Contains(got, want) {
			t.Errorf("lacks %q:\n%s", want, got)
		}
	}
	for _, bad := range []string{"line 26\n", "status became unknown", "Command aborted", "Showing lines"} {
		if strings.Contains(got, bad) {
			t.Errorf("shows %q:\n%s", bad, got)
		}
	}
}

// A changed line of a diff shows which words changed: the span between
// the common start and end of the removed and the added line.
func TestDiffHighlightsChangedWords(t *testing.T) {
	diff := []string{"@@ -1,2 +1,2 @@", "-\treturn nil", "+\treturn err", " x", "-gone entirely", "+"}
	shown := make([]string, len(diff))
	for i, l := range diff {
		shown[i] = "    " + strings.ReplaceAll(l, "\t", "    ")
	}
	spans := changedSpans(diff, shown)
	if got := string([]rune(shown[1])[spans[1][0]:spans[1][1]]); got != "nil" {
		t.Errorf("removed span %q, want nil", got)
	}
	if got := string([]rune(shown[2])[spans[2][0]:spans[2][1]]); got != "err" {
		t.Errorf("added span %q, want err", got)
	}
	if _, ok := spans[4]; ok {
		t.Error("a line with nothing in common is highlighted word by word")
	}
	r := toolReport{summary: "ok +1 -1", diff: diff}
	if plain := strings.Join(r.lines(80, plainStyles()), "\n"); !strings.Contains(plain, "    -    return nil\n    +    return err") {
		t.Fatalf("plain diff changed:\n%s", plain)
	}
}
