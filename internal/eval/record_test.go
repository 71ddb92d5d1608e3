package eval

import (
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const sampleRequest = `{"model":"m","messages":[` +
	`{"role":"system","content":"You are tiny-go.\nWorking directory: /tmp/eval-1/repo\nTools: bash."},` +
	`{"role":"user","content":"fix it, key sk-secret-value-123"},` +
	`{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"bash","arguments":"{\"command\":\"go test /tmp/eval-1/repo/...\"}"}}]},` +
	`{"role":"tool","tool_call_id":"call_1","content":"ok  \texample.com/calc\t0.004s\nat 2026-12-03T12:00:01Z id 01a23bee-2013-7970-8751-f403768c91ae in /home/u/go"}],` +
	`"tools":[{"type":"function","function":{"name":"bash","description":"Timeout in seconds (default 120s)."}}],"stream":true}`

func TestNormalizeRequest(t *testing.T) {
	n := newNormalizer([]string{"/tmp/eval-1"}, "/home/u", []string{"sk-secret-value-123", "short"})
	tree, err := n.request([]byte(sampleRequest))
	if err != nil {
		t.Fatal(err)
	}
	b, err := tree.encode()
	if err != nil {
		t.Fatal(err)
	}
	got := string(b)
	for _, want := range []string{
		`Working directory: @@EVAL_ROOT@@/repo`,
		`key [REDACTED]`,
		`go test @@EVAL_ROOT@@/repo/...`,
		"example.com/calc\\t<duration>",
		`at <timestamp> id <uuid> in @@HOME@@/go`,
		// Tool definitions keep their text: only messages hold run-specific output.
		`(default 120s)`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("normalized request lacks %q:\n%s", want, got)
		}
	}
	// Member order is kept as sent.
	if !strings.HasPrefix(got, `{"model":"m","messages":[{"role":"system"`) {
		t.Errorf("member order changed: %s", got)
	}
}

func TestFirstDifferenceNamesMessageAndField(t *testing.T) {
	n := newNormalizer([]string{"/tmp/eval-1"}, "", nil)
	want, _ := n.request([]byte(sampleRequest))
	changed := strings.Replace(sampleRequest, "You are tiny-go.", "You are tiny-go, a careful agent.", 1)
	got, _ := n.request([]byte(changed))
	d, ok := firstDifference(want, got, "", messageLabel)
	if !ok {
		t.Fatal("no difference found")
	}
	if d.path != "messages[0] (system).content" {
		t.Errorf("path = %q", d.path)
	}
	if !strings.Contains(d.detail, `character 16 (line 1)`) || !strings.Contains(d.detail, `now "You are tiny-go, a careful agent.`) {
		t.Errorf("detail = %q", d.detail)
	}

	// A message too many names the extra message; a tool result names its call.
	longer := strings.Replace(sampleRequest, `}],"tools"`, `},{"role":"user","content":"more"}],"tools"`, 1)
	got, _ = n.request([]byte(longer))
	if d, _ := firstDifference(want, got, "", messageLabel); d.path != "messages[4] (user)" || !strings.Contains(d.detail, "4 elements recorded, 5 now") {
		t.Errorf("extra message: %+v", d)
	}
	toolChanged := strings.Replace(sampleRequest, `in /home/u/go`, `in /home/u/gopath`, 1)
	got, _ = n.request([]byte(toolChanged))
	if d, _ := firstDifference(want, got, "", messageLabel); d.path != "messages[3] (tool call_1).content" {
		t.Errorf("tool message: %+v", d)
	}
	if _, ok := firstDifference(want, want, "", messageLabel); ok {
		t.Error("a request differs from itself")
	}
	// Numbers, booleans and missing members.
	a, _ := parseTree([]byte(`{"a":1,"b":true,"c":[1]}`))
	for body, wantPath := range map[string]string{
		`{"a":2,"b":true,"c":[1]}`:          "a",
		`{"a":1,"b":false,"c":[1]}`:         "b",
		`{"a":1,"c":[1]}`:                   "b",
		`{"a":1,"b":true,"c":[1],"d":null}`: "d",
		`{"a":1,"b":true,"c":{}}`:           "c",
	} {
		b, _ := parseTree([]byte(body))
		if d, ok := firstDifference(a, b, "", nil); !ok || d.path != wantPath {
			t.Errorf("%s: %+v %v", body, d, ok)
		}
	}
}

func TestRecordedResponseRoundTrip(t *testing.T) {
	n := newNormalizer([]string{"/tmp/eval-1"}, "/home/u", []string{"sk-secret-value-123"})
	body := "data: {\"choices\":[{\"delta\":{\"content\":\"see /tmp/eval-1/repo/a.go\"}}]}\n\n" +
		": keep-alive comment\n\n" +
		"event: message_start\ndata: {\"type\":\"message_start\"}\n\n" +
		"data: [DONE]\n\n" +
		"data: {\"cut"
	r := recordResponse(200, "text/event-stream", []byte(body), io.ErrUnexpectedEOF, n)
	if len(r.Events) != 5 || r.Events[1].Raw == "" || r.Events[2].Event != "message_start" || r.Events[3].Text != "[DONE]" || !r.Events[4].Partial {
		t.Fatalf("events = %+v", r.Events)
	}
	if r.Error != io.ErrUnexpectedEOF.Error() {
		t.Errorf("error = %q", r.Error)
	}
	out, err := r.body("/tmp/eval-2", "/home/v")
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(body, "/tmp/eval-1", "/tmp/eval-2", 1)
	if string(out) != want {
		t.Errorf("replayed body\n%q\nwant\n%q", out, want)
	}

	// A JSON error body and a text body.
	r = recordResponse(429, "application/json", []byte(`{"error":{"message":"slow down, sk-secret-value-123"}}`), nil, n)
	if out, _ := r.body("", ""); string(out) != `{"error":{"message":"slow down, [REDACTED]"}}` {
		t.Errorf("json body = %s", out)
	}
	r = recordResponse(502, "text/plain", []byte("bad gateway"), nil, n)
	if out, _ := r.body("", ""); string(out) != "bad gateway" {
		t.Errorf("text body = %s", out)
	}
}

func TestRecordingFileRoundTrip(t *testing.T) {
	dir := t.TempDir()
	n := newNormalizer([]string{"/tmp/eval-1"}, "", nil)
	req, _ := n.request([]byte(sampleRequest))
	rec := &Recording{Version: RecordingVersion, Task: "t", Endpoint: "http://127.0.0.1/v1", Exchanges: []Exchange{
		{Request: req, Response: recordResponse(200, "text/event-stream", []byte("data: {\"a\":1}\n\ndata: [DONE]\n\n"), nil, n)},
		{Request: req, TransportError: "connection refused"},
	}}
	if err := WriteRecording(dir, rec); err != nil {
		t.Fatal(err)
	}
	back, err := LoadRecording(dir, "t")
	if err != nil {
		t.Fatal(err)
	}
	if back.model() != "m" || len(back.Exchanges) != 2 || back.Exchanges[1].TransportError != "connection refused" {
		t.Errorf("loaded %+v", back)
	}
	if _, ok := firstDifference(req, back.Exchanges[0].Request, "", nil); ok {
		t.Error("request changed on the way through the file")
	}
	if _, err := LoadRecording(dir, "missing"); err == nil || !strings.Contains(err.Error(), "no recording for task missing") {
		t.Errorf("missing recording: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "bad.json"), []byte(`{"version":1,"task":"bad","exchanges":[{"request":{}}]}`), 0o644)
	if _, err := LoadRecording(dir, "bad"); err == nil {
		t.Error("an exchange without a response loaded")
	}
}

// TestReplayer checks the replaying transport on its own: recorded
// replies in order, the first difference reported once, and every
// request after it refused.
func TestReplayer(t *testing.T) {
	dir := t.TempDir()
	n := newNormalizer([]string{"/tmp/eval-1"}, "", nil)
	req, _ := n.request([]byte(sampleRequest))
	rec := &Recording{Version: RecordingVersion, Task: "t", Exchanges: []Exchange{
		{Request: req, Response: recordResponse(200, "text/event-stream", []byte("data: {\"p\":\"/tmp/eval-1/x\"}\n\n"), nil, n)},
		{Request: req, TransportError: "dial tcp: connection refused"},
	}}
	logPath := filepath.Join(dir, "log")
	log, _ := os.Create(logPath)
	rp := &replayer{rec: rec, norm: newNormalizer([]string{"/tmp/eval-2"}, "", nil), root: "/tmp/eval-2", log: log}
	send := func(body string) (*http.Response, error) {
		r, _ := http.NewRequest(http.MethodPost, "http://x/v1/chat/completions", strings.NewReader(body))
		return rp.RoundTrip(r)
	}
	same := strings.ReplaceAll(sampleRequest, "/tmp/eval-1", "/tmp/eval-2")
	resp, err := send(same)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	if string(b) != "data: {\"p\":\"/tmp/eval-2/x\"}\n\n" {
		t.Errorf("reply = %q", b)
	}
	if _, err := send(same); err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("recorded transport error = %v", err)
	}
	resp, _ = send(same)
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("request past the recording: status %d", resp.StatusCode)
	}
	resp, _ = send(same)
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("request after a divergence: status %d", resp.StatusCode)
	}
	data, _ := os.ReadFile(logPath)
	if string(data) != "sent\nsent\ndiverged: request 3 was not recorded: the recording ends after 2 requests\n" {
		t.Errorf("log = %q", data)
	}
}

func TestTeeBodyRecordsOnce(t *testing.T) {
	var got []string
	tb := &teeBody{rc: io.NopCloser(strings.NewReader("abc")), done: func(d []byte, err error) {
		got = append(got, string(d)+"|"+errString(err))
	}}
	io.ReadAll(tb)
	tb.Close()
	if len(got) != 1 || got[0] != "abc|" {
		t.Errorf("reports = %q", got)
	}
	got = nil
	tb = &teeBody{rc: io.NopCloser(io.MultiReader(strings.NewReader("ab"), errReader{})), done: func(d []byte, err error) {
		got = append(got, string(d)+"|"+errString(err))
	}}
	io.ReadAll(tb)
	tb.Close()
	if len(got) != 1 || got[0] != "ab|cut" {
		t.Errorf("reports = %q", got)
	}
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errors.New("cut") }

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// FuzzParseTree checks the order-keeping JSON tree: whatever parses
// encodes to JSON that parses to an equal tree.
func FuzzParseTree(f *testing.F) {
	f.Add([]byte(sampleRequest))
	f.Add([]byte(`[1, 2.5e3, -0, "\u00e9", {"": null}, true, false]`))
	f.Add([]byte(`"x"`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tree, err := parseTree(data)
		if err != nil {
			return
		}
		b, err := tree.encode()
		if err != nil {
			t.Fatalf("encode: %v", err)
		}
		again, err := parseTree(b)
		if err != nil {
			t.Fatalf("re-parse of %s: %v", b, err)
		}
		if d, ok := firstDifference(tree, again, "", nil); ok {
			t.Fatalf("round trip differs at %s: %s", d.path, d.detail)
		}
	})
}

// FuzzSplitEvents checks that a recorded stream replays byte for byte
// once it is in the canonical form a replay produces.
func FuzzSplitEvents(f *testing.F) {
	f.Add([]byte("data: {\"a\":1}\n\ndata: [DONE]\n\n"))
	f.Add([]byte("event: x\ndata: {}\n\n: c\n\ndata: {\"cut"))
	f.Add([]byte("data: \"s\"\r\n\r\nid: 1\ndata: y\n\n"))
	n := newNormalizer([]string{"/r"}, "", nil)
	f.Fuzz(func(t *testing.T, body []byte) {
		r := &Response{Status: 200, Events: splitEvents(body, n)}
		once, err := r.body("/r", "")
		if err != nil {
			t.Fatal(err)
		}
		r2 := &Response{Status: 200, Events: splitEvents(once, n)}
		twice, err := r2.body("/r", "")
		if err != nil {
			t.Fatal(err)
		}
		if string(once) != string(twice) {
			t.Fatalf("not stable:\n%q\n%q", once, twice)
		}
	})
}

// TestModelListNotServed checks that a GET (the context-window lookup)
// never reaches the endpoint or the recording in any eval mode.
func TestModelListNotServed(t *testing.T) {
	dir := t.TempDir()
	log, _ := os.Create(filepath.Join(dir, "log"))
	for _, rt := range []http.RoundTripper{
		&recorder{base: errTransport{}, norm: newNormalizer(nil, "", nil), log: log},
		&replayer{rec: &Recording{}, norm: newNormalizer(nil, "", nil), log: log},
	} {
		req, _ := http.NewRequest(http.MethodGet, "http://x/v1/models", nil)
		resp, err := rt.RoundTrip(req)
		if err != nil || resp.StatusCode != http.StatusNotFound {
			t.Errorf("%T: %v %v", rt, resp, err)
		}
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "log")); len(data) != 0 {
		t.Errorf("a GET was counted: %q", data)
	}
}

type errTransport struct{}

func (errTransport) RoundTrip(*http.Request) (*http.Response, error) {
	return nil, errors.New("the endpoint was contacted")
}

// BenchmarkReplayCheck is what a replay adds to each model request:
// normalizing the request and comparing it with the recorded one, for
// the largest request of the starter suite (long-log-compaction, ~60 KB).
func BenchmarkReplayCheck(b *testing.B) {
	rec, err := LoadRecording(filepath.Join("..", "..", "evals", "recorded"), "long-log-compaction")
	if err != nil {
		b.Fatal(err)
	}
	var want *node
	var size int
	for _, e := range rec.Exchanges {
		body, _ := e.Request.encode()
		if len(body) > size {
			want, size = e.Request, len(body)
		}
	}
	body, _ := want.encode()
	body = []byte(strings.ReplaceAll(string(body), rootPlaceholder, "/tmp/tiny-go-eval-x-123"))
	n := newNormalizer([]string{"/tmp/tiny-go-eval-x-123"}, "/root", []string{"sk-or-secret-value"})
	b.SetBytes(int64(len(body)))
	b.ResetTimer()
	for range b.N {
		got, err := n.request(body)
		if err != nil {
			b.Fatal(err)
		}
		if d, ok := firstDifference(want, got, "", messageLabel); ok {
			b.Fatalf("differs at %s: %s", d.path, d.detail)
		}
	}
}

func TestReplaceDurations(t *testing.T) {
	for in, want := range map[string]string{
		"ok  \texample.com/calc\t0.004s":       "ok  \texample.com/calc\t<duration>",
		"--- FAIL: TestSum (0.00s)":            "--- FAIL: TestSum (<duration>)",
		"ok  \texample.com/calc\t(cached)":     "ok  \texample.com/calc\t<duration>",
		"took 12ms, then 3m and 1.5h":          "took <duration>, then <duration> and <duration>",
		"waited 250µs":                         "waited <duration>",
		"v2s 10seconds x5s 7 items 2.5":        "v2s 10seconds x5s 7 items 2.5",
		"line 12: sleep 5s\n":                  "line 12: sleep <duration>\n",
		"id=r9ed71e lat=447 status 500 at 3s.": "id=r9ed71e lat=447 status 500 at <duration>.",
		"  duration_ms: 1.234567\n":            "  duration_ms: <duration>\n",
		"# duration_ms 52.6271":                "# duration_ms <duration>",
		"\u2139 duration_ms 40":                "\u2139 duration_ms <duration>",
		"  \u2713 adds two numbers (5 ms)":     "  \u2713 adds two numbers (<duration>)",
		"Tests: 3 passed (12 ms total)":        "Tests: 3 passed (12 ms total)",
		"picked (5 apples) and (7 ms":          "picked (5 apples) and (7 ms",
		"max_duration_ms: 40":                  "max_duration_ms: <duration>",
	} {
		if got := replaceDurations(in); got != want {
			t.Errorf("replaceDurations(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCostOf(t *testing.T) {
	for body, want := range map[string]float64{
		"data: {\"choices\":[]}\n\ndata: {\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"cost\":0.0025}}\n\ndata: [DONE]\n\n": 0.0025,
		`{"choices":[],"usage":{"cost":0.5}}`:                                              0.5,
		"data: {\"usage\":{\"prompt_tokens\":5}}\n\n":                                      0,
		"data: {\"choices\":[{\"delta\":{\"content\":\"the \\\"cost\\\" is high\"}}]}\n\n": 0,
		"data: {\"usage\":{\"cost\":\"free\"}}\n\n":                                        0,
	} {
		if got := costOf([]byte(body)); got != want {
			t.Errorf("costOf(%q) = %v, want %v", body, got, want)
		}
	}
}
