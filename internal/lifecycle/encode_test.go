package lifecycle

import (
	"bytes"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/tiny-agent/tiny-go/internal/session"
)

// Fixtures shared by the tests.
var (
	testTime = time.Date(2026, 3, 4, 5, 6, 7, 891_234_567, time.FixedZone("CET", 3600))
	testOp   = Op{SessionID: "s1", OperationID: "op1", Kind: session.OperationRun}
	testAtt  = ModelAttempt{Op: testOp, StepID: "st1", AttemptID: "at1", Number: 1}
	testRun  = ToolRun{Op: testOp, StepID: "st1", AttemptID: "tat1", ParentAttemptID: "at1",
		ToolStartedID: "ts1", ToolCallID: "call1", Tool: "read"}
)

// decodeMembers decodes line into its member names (in order) and raw values.
func decodeMembers(t *testing.T, line []byte) ([]string, map[string]jsontext.Value) {
	t.Helper()
	dec := jsontext.NewDecoder(bytes.NewReader(line))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		t.Fatalf("not an object: %s (%v)", line, err)
	}
	var names []string
	vals := map[string]jsontext.Value{}
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			t.Fatalf("read name: %v in %s", err, line)
		}
		name := tok.String()
		v, err := dec.ReadValue()
		if err != nil {
			t.Fatalf("read value: %v in %s", err, line)
		}
		names = append(names, name)
		vals[name] = v.Clone()
	}
	return names, vals
}

func TestEventJSONShape(t *testing.T) {
	u := &Usage{Input: 10, Output: 5, CacheRead: 20, CacheWrite: 0}
	cases := []struct {
		ev   Event
		want string // members after type and timestamp, transcribed from events.md
	}{
		{StartupStarted("m", []string{"p"}, nil), "model runtime plugins mcp"},
		{SessionAttached("s1", false), "sessionId resumed"},
		{MCPStarted("fs"), "server"},
		{MCPConnected("fs", time.Second, "2025-06-18", 0), "server durationMs outcome protocolVersion toolCount"},
		{MCPFailed("fs", time.Second, ErrorTimeout), "server durationMs outcome errorType"},
		{StartupCompleted(time.Second, Succeeded, ""), "durationMs outcome"},
		{StartupCompleted(time.Second, Failed, ErrorMCPSetup), "durationMs outcome errorType"},
		{OperationStarted(testOp), "sessionId operationId operationKind recovery"},
		{OperationRecovered(testOp), "sessionId operationId operationKind recovery"},
		{ModelStarted(testAtt), "sessionId operationId operationKind stepId attemptId attempt recovery"},
		{ModelCompleted(testAtt, time.Second, Succeeded, u, ""), "sessionId operationId operationKind stepId attemptId recovery durationMs outcome usage"},
		{ModelCompleted(testAtt, time.Second, Failed, nil, "model_error"), "sessionId operationId operationKind stepId attemptId recovery durationMs outcome errorType"},
		{ModelReconciled(testAtt, Cancelled, "aborted"), "sessionId operationId operationKind stepId attemptId recovery outcome errorType"},
		{ToolAdmitted(testOp, "st1", "ts1", "call1", "read", "safe"), "sessionId operationId stepId toolStartedId toolCallId tool replay recovery"},
		{ToolStarted(testRun), "sessionId operationId stepId attemptId parentAttemptId toolStartedId toolCallId tool recovery"},
		{ToolCompleted(testRun, time.Second, Succeeded), "sessionId operationId stepId attemptId parentAttemptId toolStartedId toolCallId tool recovery durationMs outcome"},
		{CancelRequested(testOp, session.PhaseModel, ""), "sessionId operationId operationKind phase recovery"},
		{CancelRequested(testOp, session.PhaseTool, "call1"), "sessionId operationId operationKind phase toolCallId recovery"},
		{OperationCompleted(testOp, time.Second, Result{Outcome: Failed}), "sessionId operationId operationKind recovery durationMs outcome usage"},
		{OperationCompleted(testOp, time.Second, Result{Outcome: Succeeded, Completion: session.CompletionNormal, Answer: "42", ErrorType: "x", ErrorMessage: "y"}),
			"sessionId operationId operationKind recovery durationMs outcome completion answer usage errorType errorMessage"},
	}
	seen := map[Name]bool{}
	for _, c := range cases {
		seen[c.ev.Name] = true
		line, err := MarshalLine(c.ev.At(testTime))
		if err != nil {
			t.Fatalf("%s: %v", c.ev.Name, err)
		}
		if bytes.Count(line, []byte("\n")) != 1 || !bytes.HasSuffix(line, []byte("\n")) {
			t.Errorf("%s: not exactly one line: %q", c.ev.Name, line)
		}
		names, vals := decodeMembers(t, line)
		want := append([]string{"type", "timestamp"}, strings.Fields(c.want)...)
		if !slices.Equal(names, want) {
			t.Errorf("%s members\n got %v\nwant %v", c.ev.Name, names, want)
		}
		if got := string(vals["type"]); got != `"`+string(c.ev.Name)+`"` {
			t.Errorf("type = %s, want %q", got, c.ev.Name)
		}
		if got := string(vals["timestamp"]); got != `"2026-03-04T04:06:07.891Z"` {
			t.Errorf("%s timestamp = %s", c.ev.Name, got)
		}
	}
	for _, n := range Names() {
		if !seen[n] {
			t.Errorf("no shape case for %s", n)
		}
	}
}

func TestEventJSONValues(t *testing.T) {
	check := func(ev Event, want map[string]string) {
		t.Helper()
		line, err := MarshalLine(ev.At(testTime))
		if err != nil {
			t.Fatal(err)
		}
		_, vals := decodeMembers(t, line)
		for k, w := range want {
			if got := string(vals[k]); got != w {
				t.Errorf("%s.%s = %s, want %s", ev.Name, k, got, w)
			}
		}
	}
	check(StartupStarted("openai/x", nil, nil), map[string]string{
		"model": `"openai/x"`, "runtime": `"go"`, "plugins": `[]`, "mcp": `[]`})
	check(StartupStarted("m", []string{"a", "b"}, []string{"fs"}), map[string]string{
		"plugins": `["a","b"]`, "mcp": `["fs"]`})
	check(SessionAttached("s1", false), map[string]string{"resumed": `false`})
	check(MCPConnected("fs", 1500*time.Millisecond, "2025-06-18", 0), map[string]string{
		"durationMs": `1500`, "outcome": `"succeeded"`, "toolCount": `0`})
	check(OperationRecovered(testOp), map[string]string{"recovery": `true`, "operationKind": `"run"`})
	check(OperationStarted(testOp), map[string]string{"recovery": `false`})
	check(ModelStarted(ModelAttempt{Op: testOp, StepID: "st", AttemptID: "a2", Number: 2}), map[string]string{"attempt": `2`})
	check(ModelReconciled(testAtt, Failed, ""), map[string]string{"recovery": `true`, "outcome": `"failed"`})
	check(ModelCompleted(testAtt, time.Second, Succeeded, &Usage{Input: 10, Output: 5, CacheRead: 20}, ""), map[string]string{
		"usage": `{"input":10,"output":5,"cacheRead":20,"cacheWrite":0,"cacheHitRate":66.67}`})
	check(CancelRequested(testOp, session.PhaseTool, "c"), map[string]string{"phase": `"tool"`, "toolCallId": `"c"`})
	check(ToolAdmitted(testOp, "st", "ts", "c", "bash", "never"), map[string]string{"replay": `"never"`, "tool": `"bash"`})
	check(OperationCompleted(testOp, 0, Result{Outcome: Cancelled}), map[string]string{
		"usage": `{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"cacheHitRate":0}`, "outcome": `"cancelled"`})
}

func TestCacheHitRate(t *testing.T) {
	for _, c := range []struct {
		u    Usage
		want float64
	}{
		{Usage{}, 0},
		{Usage{Output: 9}, 0},
		{Usage{Input: 1, CacheRead: 1}, 50},
		{Usage{Input: 1, CacheRead: 2}, 66.67},
		{Usage{Input: 2, CacheRead: 1}, 33.33},
		{Usage{CacheRead: 7}, 100},
		{Usage{Input: 1, CacheRead: 1, CacheWrite: 2}, 25},
		{Usage{Input: 199_999, CacheRead: 1}, 0}, // 0.0005 rounds to 0.00
		{Usage{Input: 1999, CacheRead: 1}, 0.05},
	} {
		if got := c.u.CacheHitRate(); got != c.want {
			t.Errorf("%+v.CacheHitRate() = %v, want %v", c.u, got, c.want)
		}
	}
}

func TestUnknownEventDoesNotEncode(t *testing.T) {
	if _, err := MarshalLine(Event{Name: "bogus"}); err == nil {
		t.Fatal("unknown event encoded")
	}
	if _, err := MarshalLine(Event{}); err == nil {
		t.Fatal("nameless event encoded")
	}
}

func TestInvalidUTF8AnswerStillOneLine(t *testing.T) {
	ev := OperationCompleted(testOp, 0, Result{Outcome: Succeeded, Answer: "ok\xff\nnext"})
	line, err := MarshalLine(ev)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Answer string `json:"answer"`
	}
	if err := json.Unmarshal(bytes.TrimSuffix(line, []byte("\n")), &got); err != nil {
		t.Fatalf("%v: %s", err, line)
	}
	if got.Answer != "ok\uFFFD\nnext" {
		t.Errorf("answer = %q", got.Answer)
	}
}

func TestTimestampLayout(t *testing.T) {
	re := regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`)
	for _, tm := range []time.Time{testTime, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), time.Now()} {
		s := Event{Time: tm}.Timestamp()
		if !re.MatchString(s) {
			t.Errorf("timestamp %q is not RFC 3339 UTC with milliseconds", s)
		}
		back, err := time.Parse(time.RFC3339, s)
		if err != nil || !back.Equal(tm.Truncate(time.Millisecond)) {
			t.Errorf("timestamp %q parses to %v (%v), want %v", s, back, err, tm)
		}
	}
}

func TestConstructorsStampUTCNow(t *testing.T) {
	before := time.Now()
	ev := OperationStarted(testOp)
	if ev.Time.Before(before.Add(-time.Second)) || ev.Time.Location() != time.UTC {
		t.Errorf("Time = %v", ev.Time)
	}
}
