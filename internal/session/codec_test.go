package session

import (
	"bytes"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/gowebpki/jcs"
)

// TestFixtureLinesRoundTrip decodes every fact line of the shared
// fixtures and encodes it again: canonical lines come back byte for byte
// (the other runtimes write JCS too), the rest come back equal as JSON.
func TestFixtureLinesRoundTrip(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(sessionDir(t), "fixtures", "*.jsonl"))
	canonical := 0
	for _, file := range files {
		for i, line := range committedLines(readTestFile(t, file)) {
			if i == 0 {
				continue
			}
			tx, c := DecodeTransaction(line)
			if c != nil {
				continue // a corrupt line some fixture is about
			}
			enc, err := EncodeTransaction(tx)
			if err != nil {
				t.Fatalf("%s line %d: %v", filepath.Base(file), i+1, err)
			}
			if canon, _ := jcs.Transform(line); bytes.Equal(canon, line) {
				canonical++
				if !bytes.Equal(enc, append(bytes.Clone(line), '\n')) {
					t.Errorf("%s line %d:\n got %s\nwant %s", filepath.Base(file), i+1, enc, line)
				}
				continue
			}
			assertJSONEqual(t, bytes.TrimSuffix(enc, []byte("\n")), line)
		}
	}
	if canonical < 100 {
		t.Errorf("only %d canonical lines checked", canonical)
	}
}

// TestHeaderCodec checks EncodeHeader/DecodeHeader and every header code.
func TestHeaderCodec(t *testing.T) {
	h := Header{ID: "018f0000-0000-7000-8000-000000000001", CreatedAt: 1710000000000, Cwd: "/work \"x\"",
		Provider: "openrouter", Model: "test/model", EnvironmentIdentity: "env\u00e9"}
	line := EncodeHeader(h)
	if !bytes.HasSuffix(line, []byte("\n")) {
		t.Fatal("EncodeHeader does not end the line")
	}
	got, c := DecodeHeader(line[:len(line)-1])
	if c != nil || got != h {
		t.Fatalf("round trip: %+v, %v", got, c)
	}
	const valid = `{"createdAt":1,"cwd":"/w","environmentIdentity":"e","id":"018f0000-0000-7000-8000-000000000001","kind":"header","model":"m","provider":"p","version":2}`
	for _, tc := range []struct{ line, code string }{
		{valid, ""},
		{strings.Replace(valid, `"version":2`, `"version":2.0`, 1), ""},
		{strings.Replace(valid, `"version":2`, `"version":3`, 1), CorruptUnsupportedVersion},
		{strings.Replace(valid, `"version":2`, `"version":1,"future":true`, 1), CorruptUnsupportedVersion},
		{strings.Replace(valid, `"version":2`, `"version":"2"`, 1), CorruptInvalidHeader},
		{strings.Replace(valid, `"cwd":"/w"`, `"cwd":""`, 1), CorruptInvalidHeader},
		{strings.Replace(valid, `"cwd":"/w",`, ``, 1), CorruptInvalidHeader},
		{strings.Replace(valid, `"cwd":"/w"`, `"cwd":"/w","extra":1`, 1), CorruptInvalidHeader},
		{strings.Replace(valid, `000000000001"`, `00000000000G"`, 1), CorruptInvalidHeader},
		{strings.Replace(valid, `"kind":"header"`, `"kind":"entry"`, 1), CorruptMissingHeader},
		{`{"type":"session","version":1,"id":"018f0000-0000-7000-8000-000000000001"}`, CorruptInvalidHeader},
		{`[{"kind":"entry"}]`, CorruptMissingHeader},
		{`"header"`, CorruptInvalidHeader},
		{strings.Replace(valid, `"cwd":"/w"`, `"cwd":"/w","cwd":"/v"`, 1), CorruptMalformedJSON},
		{strings.Replace(valid, `"cwd":"/w"`, `"cwd":"\udfff"`, 1), CorruptMalformedJSON},
		{valid[:40], CorruptMalformedJSON},
		{valid + "\r", CorruptCRLF},
		{"", CorruptBlankLine},
		{strings.Replace(valid, `"/w"`, "\"/\xff\"", 1), CorruptMalformedJSON},
		{strings.Replace(valid, `"cwd":`, "\xff\"cwd\":", 1), CorruptInvalidUTF8},
	} {
		_, c := DecodeHeader([]byte(tc.line))
		switch {
		case tc.code == "" && c != nil:
			t.Errorf("DecodeHeader(%s): %v", tc.line, c)
		case tc.code != "" && (c == nil || c.Code != tc.code || c.Line != 1):
			t.Errorf("DecodeHeader(%s) = %v, want %s at line 1", tc.line, c, tc.code)
		}
	}
}

// fixtureFact returns fact number index (0-based) of a fixture line as a
// generic JSON value.
func fixtureFact(t *testing.T, file string, line, index int) map[string]any {
	t.Helper()
	lines := committedLines(readTestFile(t, filepath.Join(sessionDir(t), "fixtures", file)))
	var v any
	if err := json.Unmarshal(lines[line-1], &v); err != nil {
		t.Fatal(err)
	}
	if arr, ok := v.([]any); ok {
		v = arr[index]
	}
	return v.(map[string]any)
}

func dig(v map[string]any, path ...string) map[string]any {
	for _, p := range path {
		v = v[p].(map[string]any)
	}
	return v
}

func marshalLine(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v, json.Deterministic(true))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestDecodeRejectsForeignShapes mutates valid facts of every variant:
// each unknown member, member of another variant, missing member or
// out-of-range value is INVALID_FACT (with the fact's seq); each mutation
// is first checked to be strict JSON.
func TestDecodeRejectsForeignShapes(t *testing.T) {
	const ctr = "completed-tool-run.jsonl"
	type mutation struct {
		name        string
		file        string
		line, index int
		mutate      func(f map[string]any)
		code        string // "" for still valid
	}
	del := func(path ...string) func(map[string]any) {
		return func(f map[string]any) { delete(dig(f, path[:len(path)-1]...), path[len(path)-1]) }
	}
	set := func(v any, path ...string) func(map[string]any) {
		return func(f map[string]any) { dig(f, path[:len(path)-1]...)[path[len(path)-1]] = v }
	}
	id := "018f0000-0000-7000-8000-0000000000ff"
	for _, m := range []mutation{
		{"user entry as is", ctr, 2, 0, func(map[string]any) {}, ""},
		{"user entry with stepId", ctr, 2, 0, set(id, "entry", "stepId"), CorruptInvalidFact},
		{"user entry with empty content", ctr, 2, 0, set("", "entry", "message", "content"), CorruptInvalidFact},
		{"user entry with null content", ctr, 2, 0, set(nil, "entry", "message", "content"), CorruptInvalidFact},
		{"unknown fact member", ctr, 2, 0, set(1, "extra"), CorruptInvalidFact},
		{"entry fact with a record", ctr, 2, 0, set(map[string]any{}, "record"), CorruptInvalidFact},
		{"unknown kind", ctr, 2, 0, set("note", "kind"), CorruptInvalidFact},
		{"seq 0", ctr, 2, 0, set(0, "seq"), CorruptInvalidFact},
		{"seq 1.5", ctr, 2, 0, set(1.5, "seq"), CorruptInvalidFact},
		{"seq 1.0 is the integer 1", ctr, 2, 0, set(1.0, "seq"), ""},
		{"seq past 2^53-1", ctr, 2, 0, set(9007199254740992.0, "seq"), CorruptInvalidFact},
		{"timestamp negative", ctr, 2, 0, set(-1, "timestamp"), CorruptInvalidFact},
		{"uppercase id", ctr, 2, 0, set(strings.ToUpper(id), "id"), CorruptInvalidFact},
		{"system role", ctr, 2, 0, set("system", "entry", "message", "role"), CorruptInvalidFact},
		{"entry type note", ctr, 2, 0, set("note", "entry", "type"), CorruptInvalidFact},
		{"runStarted with stepId", ctr, 2, 1, set(id, "record", "stepId"), CorruptInvalidFact},
		{"runStarted of a compaction", ctr, 2, 1, set("compaction", "record", "operationKind"), CorruptInvalidFact},
		{"record type unknown", ctr, 2, 1, set("runPaused", "record", "type"), CorruptInvalidFact},
		{"stepAttempt attempt 3", ctr, 3, 0, set(3, "record", "attempt"), CorruptInvalidFact},
		{"stepAttempt attempt as string", ctr, 3, 0, set("1", "record", "attempt"), CorruptInvalidFact},
		{"stepAttempt without digest", ctr, 3, 0, del("record", "configurationDigest"), CorruptInvalidFact},
		{"stepAttempt bad digest shape", ctr, 3, 0, set("sha256:ABC", "record", "configurationDigest"), CorruptInvalidFact},
		{"snapshot extra member", ctr, 3, 0, set("x", "record", "configurationSnapshot", "temperature"), CorruptInvalidFact},
		{"snapshot number member", ctr, 3, 0, set(1, "record", "configurationSnapshot", "model"), CorruptInvalidFact},
		{"snapshot tool extra member", ctr, 3, 0, func(f map[string]any) {
			dig(f, "record", "configurationSnapshot")["tools"].([]any)[0].(map[string]any)["replay"] = "safe"
		}, CorruptInvalidFact},
		{"assistant without attemptId", ctr, 4, 0, del("entry", "attemptId"), CorruptInvalidFact},
		{"assistant with toolStartedId", ctr, 4, 0, set(id, "entry", "toolStartedId"), CorruptInvalidFact},
		{"assistant stopReason unknown", ctr, 4, 0, set("content_filter", "entry", "stopReason"), CorruptInvalidFact},
		{"assistant empty tool_calls", ctr, 4, 0, set([]any{}, "entry", "message", "tool_calls"), CorruptInvalidFact},
		{"tool call of type other", ctr, 4, 0, func(f map[string]any) {
			dig(f, "entry", "message")["tool_calls"].([]any)[0].(map[string]any)["type"] = "other"
		}, CorruptInvalidFact},
		{"tool call arguments not a string", ctr, 4, 0, func(f map[string]any) {
			dig(f, "entry", "message")["tool_calls"].([]any)[0].(map[string]any)["function"].(map[string]any)["arguments"] = map[string]any{}
		}, CorruptInvalidFact},
		{"toolStarted arguments not an object", ctr, 5, 0, set("{}", "record", "arguments"), CorruptInvalidFact},
		{"toolStarted replay maybe", ctr, 5, 0, set("maybe", "record", "replay"), CorruptInvalidFact},
		{"toolStarted without environmentIdentity", ctr, 5, 0, del("record", "environmentIdentity"), CorruptInvalidFact},
		{"started result with assistantEntryId", ctr, 6, 0, set(id, "entry", "assistantEntryId"), CorruptInvalidFact},
		{"started result with a reason", ctr, 6, 0, set("x", "entry", "result", "reason"), CorruptInvalidFact},
		{"started result aborted", ctr, 6, 0, set(map[string]any{"type": "synthetic", "reason": "aborted"}, "entry", "result"), CorruptInvalidFact},
		{"started result interrupted", ctr, 6, 0, set(map[string]any{"type": "synthetic", "reason": "interrupted"}, "entry", "result"), ""},
		{"tool message without tool_call_id", ctr, 6, 0, del("entry", "message", "tool_call_id"), CorruptInvalidFact},
		{"synthetic with toolStartedId", "synthetic-aborted.jsonl", 5, 0, set(id, "entry", "toolStartedId"), CorruptInvalidFact},
		{"synthetic interrupted", "synthetic-aborted.jsonl", 5, 0, set("interrupted", "entry", "result", "reason"), CorruptInvalidFact},
		{"synthetic toolIndex negative", "synthetic-aborted.jsonl", 5, 0, set(-1, "entry", "toolIndex"), CorruptInvalidFact},
		{"completed run without completion", ctr, 9, 0, del("record", "completion"), CorruptInvalidFact},
		{"completed run with error", ctr, 9, 0, set(map[string]any{"code": "x", "message": "y"}, "record", "error"), CorruptInvalidFact},
		{"usage as is", ctr, 10, 0, func(map[string]any) {}, ""},
		{"usage with two owners", ctr, 10, 0, set(id, "toolStartedId"), CorruptInvalidFact},
		{"usage without owner", ctr, 10, 0, del("attemptId"), CorruptInvalidFact},
		{"usage without cacheWrite", ctr, 10, 0, del("usage", "cacheWrite"), CorruptInvalidFact},
		{"usage negative", ctr, 10, 0, set(-3, "usage", "input"), CorruptInvalidFact},
		{"usage with an entry", ctr, 10, 0, set(map[string]any{}, "entry"), CorruptInvalidFact},
		{"compactionStarted nothing compacted", "completed-compaction.jsonl", 11, 0, set([]any{}, "record", "compactedEntryIds"), CorruptInvalidFact},
		{"compaction entry with message", "completed-compaction.jsonl", 13, 0, set(map[string]any{"role": "user", "content": "x"}, "entry", "message"), CorruptInvalidFact},
		{"retained message extra member", "completed-compaction.jsonl", 13, 0, func(f map[string]any) {
			dig(f, "entry")["retainedTail"].([]any)[0].(map[string]any)["toolName"] = "read"
		}, CorruptInvalidFact},
		{"abort in phase model with toolCallId", "aborted-open-attempt-reconciled.jsonl", 4, 0, set("call_1", "record", "toolCallId"), CorruptInvalidFact},
		{"abort in phase tool without toolCallId", "aborted-open-attempt-reconciled.jsonl", 4, 0, set("tool", "record", "phase"), CorruptInvalidFact},
		{"abort reason user", "aborted-open-attempt-reconciled.jsonl", 4, 0, set("user", "record", "reason"), CorruptInvalidFact},
		{"stepFailed empty message", "aborted-open-attempt-reconciled.jsonl", 5, 0, set("", "record", "error", "message"), CorruptInvalidFact},
		{"aborted with finalEntryId", "aborted-open-attempt-reconciled.jsonl", 6, 0, set(id, "record", "finalEntryId"), CorruptInvalidFact},
		{"failed without error", "aborted-open-attempt-reconciled.jsonl", 6, 0, set("failed", "record", "outcome"), CorruptInvalidFact},
		{"failed with error", "aborted-open-attempt-reconciled.jsonl", 6, 0, func(f map[string]any) {
			r := dig(f, "record")
			r["outcome"], r["error"] = "failed", map[string]any{"code": "model_error", "message": "provider request failed"}
		}, ""},
	} {
		t.Run(m.name, func(t *testing.T) {
			f := fixtureFact(t, m.file, m.line, m.index)
			m.mutate(f)
			line := marshalLine(t, f)
			if !validStrict(line) {
				t.Fatalf("mutation is not strict JSON: %s", line)
			}
			tx, c := DecodeTransaction(line)
			if m.code == "" {
				if c != nil {
					t.Fatalf("DecodeTransaction(%s): %v", line, c)
				}
				if _, err := EncodeTransaction(tx); err != nil {
					t.Fatalf("re-encode: %v", err)
				}
				return
			}
			if c == nil || c.Code != m.code {
				t.Fatalf("DecodeTransaction(%s) = %v, want %s", line, c, m.code)
			}
			if seq, ok := f["seq"].(float64); ok && seq >= 1 && seq <= maxSafeInteger && seq == float64(int64(seq)) && c.Seq != int64(seq) {
				t.Errorf("corruption seq %d, want %v", c.Seq, seq)
			}
		})
	}
}

func TestDecodeTransactionFraming(t *testing.T) {
	fact := string(marshalLine(t, fixtureFact(t, "completed-tool-run.jsonl", 2, 0)))
	for _, tc := range []struct{ line, code string }{
		{fact, ""},
		{"[" + fact + "]", ""},
		{" " + fact + " ", ""},
		{"[]", CorruptEmptyTransaction},
		{"[ ]", CorruptEmptyTransaction},
		{"5", CorruptInvalidFact},
		{"[5]", CorruptInvalidFact},
		{"null", CorruptInvalidFact},
		{"[" + fact + "," + fact, CorruptMalformedJSON},
		{fact + fact, CorruptMalformedJSON},
		{"[" + fact + ",{\"kind\":\"entry\",\"kind\":\"entry\"}]", CorruptMalformedJSON},
		// A shape fault early on does not hide a syntax fault later.
		{"[{\"kind\":\"nope\"}," + fact[:20], CorruptMalformedJSON},
		{"", CorruptBlankLine},
		{fact + "\r", CorruptCRLF},
		// Invalid UTF-8 inside a string is malformed JSON; elsewhere it
		// is INVALID_UTF8.
		{strings.Replace(fact, "inspect", "insp\xc3ect", 1), CorruptMalformedJSON},
		{strings.Replace(fact, "inspect", "insp\xed\xa0\x80ect", 1), CorruptMalformedJSON},
		{strings.Replace(fact, "inspect", "insp\\\"\xffect", 1), CorruptMalformedJSON},
		{fact + " \xff", CorruptInvalidUTF8},
		{strings.Replace(fact, `"seq":`, "\xe2\x82\"seq\":", 1), CorruptInvalidUTF8},
		{strings.Replace(fact, "inspect", `insp\ud800ect`, 1), CorruptMalformedJSON},
	} {
		tx, c := DecodeTransaction([]byte(tc.line))
		switch {
		case tc.code == "" && (c != nil || len(tx) != 1):
			t.Errorf("DecodeTransaction(%.60s): %v", tc.line, c)
		case tc.code != "" && (c == nil || c.Code != tc.code):
			t.Errorf("DecodeTransaction(%.60s) = %v, want %s", tc.line, c, tc.code)
		}
	}
}

func TestEncodeTransaction(t *testing.T) {
	user := Fact{Seq: 1, ID: "018f0000-0000-7000-8000-000000000002", Timestamp: 5, Entry: &UserEntry{Content: "hi \"there\"\n"}}
	run := Fact{Seq: 2, ID: "018f0000-0000-7000-8000-000000000003", Timestamp: 5, Record: &RunStarted{
		OperationID: "018f0000-0000-7000-8000-000000000004", InputEntryID: user.ID}}
	one, err := EncodeTransaction([]Fact{user})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"entry":{"message":{"content":"hi \"there\"\n","role":"user"},"type":"message"},"id":"018f0000-0000-7000-8000-000000000002","kind":"entry","seq":1,"timestamp":5}` + "\n"
	if string(one) != want {
		t.Errorf("one fact:\n got %s\nwant %s", one, want)
	}
	two, err := EncodeTransaction([]Fact{user, run})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(two, []byte("[{")) || !bytes.HasSuffix(two, []byte("}]\n")) || bytes.Count(two, []byte("\n")) != 1 {
		t.Errorf("two facts: %s", two)
	}
	again, _ := EncodeTransaction([]Fact{user, run})
	if !bytes.Equal(two, again) {
		t.Error("encoding is not deterministic")
	}
	back, c := DecodeTransaction(two[:len(two)-1])
	if c != nil || !reflect.DeepEqual(back, []Fact{user, run}) {
		t.Errorf("round trip: %+v, %v", back, c)
	}

	bad := []struct {
		name string
		tx   []Fact
		code string
	}{
		{"no facts", nil, CorruptEmptyTransaction},
		{"no payload", []Fact{{Seq: 1, ID: user.ID, Timestamp: 1}}, CorruptInvalidFact},
		{"nil entry", []Fact{{Seq: 1, ID: user.ID, Timestamp: 1, Entry: (*UserEntry)(nil)}}, CorruptInvalidFact},
		{"two payloads", []Fact{{Seq: 1, ID: user.ID, Timestamp: 1, Entry: user.Entry, Record: run.Record}}, CorruptInvalidFact},
		{"invalid UTF-8", []Fact{{Seq: 1, ID: user.ID, Timestamp: 1, Entry: &UserEntry{Content: "\xff"}}}, CorruptMalformedJSON},
		{"no id", []Fact{{Seq: 1, Timestamp: 1, Entry: user.Entry}}, CorruptInvalidFact},
		{"no seq", []Fact{{ID: user.ID, Timestamp: 1, Entry: user.Entry}}, CorruptInvalidFact},
		{"arguments not an object", []Fact{{Seq: 1, ID: user.ID, Timestamp: 1, Record: &ToolStarted{
			OperationID: run.ID, StepID: run.ID, AssistantEntryID: run.ID, ToolCallID: "c", ToolName: "read",
			Arguments: jsontext.Value(`[1]`), Replay: "safe", ReplayKey: "k", EnvironmentIdentity: "e", ResultEntryID: user.ID}}}, CorruptInvalidFact},
		{"arguments invalid", []Fact{{Seq: 1, ID: user.ID, Timestamp: 1, Record: &ToolStarted{Arguments: jsontext.Value(`{"a":1,"a":1}`)}}}, CorruptInvalidFact},
		{"unknown result", []Fact{{Seq: 1, ID: user.ID, Timestamp: 1, Entry: &ToolResultEntry{Result: "maybe"}}}, CorruptInvalidFact},
	}
	for _, tc := range bad {
		_, err := EncodeTransaction(tc.tx)
		var c *Corruption
		if !errors.As(err, &c) || c.Code != tc.code {
			t.Errorf("%s: EncodeTransaction error %v, want %s", tc.name, err, tc.code)
		}
	}
}

// TestArgumentsAreCanonicalized checks that toolStarted arguments are
// written in JCS form whatever form they came in.
func TestArgumentsAreCanonicalized(t *testing.T) {
	f := fixtureFact(t, "completed-tool-run.jsonl", 5, 0)
	tx, c := DecodeTransaction(marshalLine(t, f))
	if c != nil {
		t.Fatal(c)
	}
	ts := tx[0].Record.(*ToolStarted)
	ts.Arguments = jsontext.Value(` { "path" : "README.md", "limit": 1.0E2 } `)
	line, err := EncodeTransaction(tx)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(line, []byte(`"arguments":{"limit":100,"path":"README.md"}`)) {
		t.Errorf("arguments not canonical: %s", line)
	}
}
