package providertest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseScript(t *testing.T) {
	replies, err := ParseScript([]byte(`{"replies":[
		{"toolCalls":[{"id":"c1","name":"read","arguments":"{\"path\":\"a.txt\"}"}],
		 "usage":{"promptTokens":120,"completionTokens":9,"cachedTokens":100}},
		{"text":"done","delay":"50ms","chunkSize":2},
		{"status":429,"body":"{}","contentType":"application/json"},
		{"text":"partial","cut":true,"after":2},
		{"hang":true},
		{"json":true,"finishReason":"length","omitFinish":false,"streamError":""}
	]}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(replies) != 6 {
		t.Fatalf("%d replies", len(replies))
	}
	if c := replies[0].ToolCalls[0]; c.ID != "c1" || c.Arguments != `{"path":"a.txt"}` || *replies[0].Usage.CachedTokens != 100 || replies[0].Usage.CacheWriteTokens != nil {
		t.Errorf("reply 0 = %+v", replies[0])
	}
	if replies[1].Delay != 50*time.Millisecond || replies[1].ChunkSize != 2 {
		t.Errorf("reply 1 = %+v", replies[1])
	}
	if !replies[3].Cut || replies[3].After != 2 || !replies[4].Hang || !replies[5].JSON {
		t.Errorf("replies = %+v", replies)
	}
}

func TestParseScriptErrors(t *testing.T) {
	for _, bad := range []string{
		`{"replies":[{"txt":"typo"}]}`,
		`{"replies":[{"handler":"x"}]}`,
		`{"replies":[{"hang":true,"cut":true}]}`,
		`{"replies":[{"after":-1}]}`,
		`{"replies":[{"status":99}]}`,
		`{"replies":[{"delay":"soon"}]}`,
		`{"replies":[{"text":"a","text":"b"}]}`,
		`[{"text":"a"}]`,
	} {
		if _, err := ParseScript([]byte(bad)); err == nil {
			t.Errorf("ParseScript(%s) succeeded", bad)
		}
	}
}

func TestLoadScript(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.json")
	os.WriteFile(path, []byte(`{"replies":[{"text":"x"}]}`), 0o600)
	if r, err := LoadScript(path); err != nil || len(r) != 1 || r[0].Text != "x" {
		t.Errorf("%+v %v", r, err)
	}
	os.WriteFile(path, []byte(`{"replies":[{"bogus":1}]}`), 0o600)
	if _, err := LoadScript(path); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("error %v does not name the file", err)
	}
	if _, err := LoadScript(filepath.Join(t.TempDir(), "missing.json")); err == nil {
		t.Error("missing file loaded")
	}
}

func TestSplit(t *testing.T) {
	if got := strings.Join(split("héllo wörld", 4), "|"); got != "héll|o wö|rld" {
		t.Errorf("split = %q", got)
	}
	if split("", 4) != nil {
		t.Error("split of empty text has pieces")
	}
}

// FuzzParseScript checks that any script that parses can be served: every
// reply builds a response, and a script survives a round trip.
func FuzzParseScript(f *testing.F) {
	f.Add([]byte(`{"replies":[{"text":"hi","usage":{"promptTokens":1,"completionTokens":2}}]}`))
	f.Add([]byte(`{"replies":[{"toolCalls":[{"id":"a","name":"b","arguments":"{"}],"chunkSize":1,"cut":true,"after":3}]}`))
	f.Add([]byte(`{"replies":[{"status":500,"body":"x"},{"json":true,"delay":"1ms"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		replies, err := ParseScript(data)
		if err != nil {
			return
		}
		for _, r := range replies {
			if len(r.Text) > 1<<16 {
				continue
			}
			resp := build(r, "m")
			if len(resp.events) == 0 || resp.status < 200 {
				t.Fatalf("reply %+v builds %+v", r, resp)
			}
		}
		b, err := MarshalScript(replies)
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		again, err := ParseScript(b)
		if err != nil || len(again) != len(replies) {
			t.Fatalf("round trip of %s: %v", b, err)
		}
	})
}
