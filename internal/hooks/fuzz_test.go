package hooks

import (
	"bytes"
	"testing"

	"github.com/go-json-experiment/json"
)

// FuzzParseOutput: any stdout is read without panicking; what is not JSON
// is plain text, and JSON accepted carries only values Claude Code knows.
func FuzzParseOutput(f *testing.F) {
	for _, s := range []string{
		``, `plain text`, `{}`, `{"continue":false,"stopReason":"x"}`,
		`{"decision":"block","reason":"no"}`, `{"decision":"approve"}`,
		`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"r","updatedInput":{"command":"ls"}}}`,
		`{"hookSpecificOutput":{"decision":{"behavior":"allow","updatedInput":{}}}}`,
		`{"hookSpecificOutput":{"additionalContext":"ctx"}}`, `{not json`, ` {"a":1} `, `{"decision":"maybe"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		out, isJSON, err := ParseOutput(data)
		trimmed := bytes.TrimSpace(data)
		if len(trimmed) == 0 || trimmed[0] != '{' {
			if isJSON || err != nil {
				t.Fatalf("plain text read as JSON: %q", data)
			}
			return
		}
		if !isJSON {
			t.Fatalf("JSON-looking output read as text: %q", data)
		}
		if err != nil {
			return
		}
		if d, _ := out.permission(); d != "" && rank(d) == 0 {
			t.Fatalf("unknown decision %q accepted", d)
		}
		if s := out.Specific; s != nil && len(s.UpdatedInput) > 0 && s.UpdatedInput.Kind() != '{' {
			t.Fatalf("updatedInput %s accepted", s.UpdatedInput)
		}
	})
}

// FuzzLoadTable: any hooks table loads without panicking, and every hook
// it yields can be run: a known event, a command, a positive timeout.
func FuzzLoadTable(f *testing.F) {
	for _, s := range []string{
		`{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"x","timeout":5}]}]}`,
		`{"Stop":[{"hooks":[{"type":"command","command":"y"}]}],"Nope":[]}`,
		`{"PostToolUse":[{"matcher":"(","hooks":[{"type":"command","command":"z"}]}]}`,
		`{"PreToolUse":[{"hooks":[{"type":"prompt","prompt":"p"}]}]}`, `[]`, `null`, `{`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c := Load(nil, []Table{{Source: "t", JSON: data}})
		for _, h := range c.Hooks {
			if !known(h.Event) || h.Command == "" || h.Timeout <= 0 || h.match == nil {
				t.Fatalf("unusable hook %+v from %q", h, data)
			}
			h.Matches("Bash", "bash")
		}
	})
}

// FuzzLogLoad: any sidecar content loads without panicking, and a record
// written after it reads back.
func FuzzLogLoad(f *testing.F) {
	f.Add([]byte(`{"pre":"a/c1","decision":"deny","reason":"r"}` + "\n" + `{"post":"a/c1","state":"started"}` + "\n" + `{"context":"e1","text":"t"}` + "\n" + `{"pre":"torn`))
	f.Fuzz(func(t *testing.T, data []byte) {
		l := &Log{pre: map[string]record{}, post: map[string]string{}, context: map[string]string{}}
		l.load(data)
		line, _ := json.Marshal(record{Pre: "k/x", Decision: "allow"})
		l.load(append(append(data[:len(data):len(data)], '\n'), append(line, '\n')...))
		if d, _, _, ok := l.Pre("k/x"); !ok || d != "allow" {
			t.Fatalf("the record after %q did not read back", data)
		}
	})
}
