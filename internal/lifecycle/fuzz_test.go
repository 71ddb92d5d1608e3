package lifecycle

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"
)

// FuzzParseHeaders: the OTLP headers parser never panics, and what it
// accepts is safe to put on the wire (valid names, no CR/LF/NUL in values).
func FuzzParseHeaders(f *testing.F) {
	for _, s := range []string{"", "a=b", " a = b , c=d%20e,,", "Authorization=Basic%20x%3D", "=v", "a=%zz", "a=x%0Ay", "k=v=w", "\xff=\xfe"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		h, err := parseHeaders(s)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("multi-line error %q", err)
			}
			return
		}
		for k, v := range h {
			if !validHeaderName(k) || strings.ContainsAny(v, "\r\n\x00") {
				t.Fatalf("accepted unsafe header %q: %q", k, v)
			}
		}
	})
}

// FuzzEventLine: whatever text an event carries (answer, error message,
// ids), MarshalLine yields exactly one line holding one JSON object with
// the event's members.
func FuzzEventLine(f *testing.F) {
	f.Add("op1", "the answer", "boom", "read", int64(3))
	f.Add("", "", "", "", int64(0))
	f.Add("\u2028", "line1\nline2\r\x00", "\xff\xfe", "\"quoted\"", int64(-1))
	f.Fuzz(func(t *testing.T, id, answer, msg, tool string, n int64) {
		op := Op{SessionID: id, OperationID: id, Kind: "run", Recovery: n%2 == 0}
		run := ToolRun{Op: op, StepID: id, AttemptID: id, ParentAttemptID: id, ToolStartedID: id, ToolCallID: id, Tool: tool}
		u := Usage{Input: n, Output: n, CacheRead: n, CacheWrite: n}
		for _, ev := range []Event{
			OperationCompleted(op, time.Duration(n), Result{Outcome: Failed, Answer: answer, ErrorType: msg, ErrorMessage: msg, Usage: u}),
			ToolCompleted(run, time.Duration(n), Outcome(msg)),
			StartupStarted(tool, []string{answer, msg}, []string{id}),
		} {
			line, err := MarshalLine(ev)
			if err != nil {
				t.Fatalf("%s: %v", ev.Name, err)
			}
			body, ok := bytes.CutSuffix(line, []byte("\n"))
			if !ok || bytes.ContainsAny(body, "\r\n") {
				t.Fatalf("not one line: %q", line)
			}
			if !jsontext.Value(body).IsValid() || jsontext.Value(body).Kind() != '{' {
				t.Fatalf("not one JSON object: %q", body)
			}
			names, _ := decodeMembers(t, body)
			if len(names) < 2 || names[0] != "type" || names[1] != "timestamp" {
				t.Fatalf("members %v", names)
			}
		}
	})
}
