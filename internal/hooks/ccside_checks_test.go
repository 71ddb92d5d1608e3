package hooks_test

import (
	"encoding/json"
	"regexp"
	"sort"
	"strings"
)

// check is one field or behaviour of the comparison: get reads it from
// one agent's run; the two match when the values are equal (paths under
// the working directory are written $DIR).
type check struct {
	name string
	get  func(r *sideRun) any
}

// byID is the record of an event for the call with this tool_use_id.
func (r *sideRun) byID(event, id string) map[string]any {
	for _, h := range r.of(event) {
		if h.In["tool_use_id"] == id {
			return h.In
		}
	}
	return nil
}

func (r *sideRun) recByID(event, id string) *hookRec {
	for i, h := range r.Hooks {
		if h.Event == event && h.In["tool_use_id"] == id {
			return &r.Hooks[i]
		}
	}
	return nil
}

func (r *sideRun) first(event string) map[string]any {
	if hs := r.of(event); len(hs) > 0 {
		return hs[0].In
	}
	return nil
}

// field is m[path...], nil when missing.
func field(m map[string]any, path ...string) any {
	var v any = m
	for _, k := range path {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = mm[k]
	}
	return v
}

func keys(v any) []string {
	m, _ := v.(map[string]any)
	out := []string{}
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// sent reports whether any request to the model holds s.
func (r *sideRun) sent(s string) bool {
	for _, q := range r.Requests {
		if strings.Contains(string(q.Body), s) {
			return true
		}
	}
	return false
}

// result is the model's view of a call's result: its text and is_error.
func (r *sideRun) result(id string) (string, bool) {
	for i := len(r.Requests) - 1; i >= 0; i-- {
		var req request
		if json.Unmarshal(r.Requests[i].Body, &req) != nil {
			continue
		}
		for _, m := range req.Messages {
			var blocks []map[string]any
			if json.Unmarshal(m.Content, &blocks) != nil {
				continue
			}
			for _, b := range blocks {
				if b["type"] == "tool_result" && b["tool_use_id"] == id {
					raw, _ := json.Marshal([]any{b})
					isErr, _ := b["is_error"].(bool)
					return text(raw), isErr
				}
			}
		}
	}
	return "", false
}

var uuidForm = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// transcriptLines parses a transcript copy, nil when there is none.
func transcriptLines(b []byte) []map[string]any {
	var out []map[string]any
	for _, line := range strings.Split(string(b), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil {
			out = append(out, m)
		}
	}
	return out
}

// holds reports whether a transcript has a line of this type whose
// message content holds a block of blockType with key == value.
func holds(lines []map[string]any, typ, blockType, key, value string) bool {
	for _, l := range lines {
		if l["type"] != typ {
			continue
		}
		content := field(l, "message", "content")
		if s, ok := content.(string); ok && blockType == "text" && strings.Contains(s, value) {
			return true
		}
		list, _ := content.([]any)
		for _, b := range list {
			bm, _ := b.(map[string]any)
			if bm["type"] == blockType {
				if s, _ := bm[key].(string); strings.Contains(s, value) {
					return true
				}
			}
		}
	}
	return false
}

// wellFormed: every user and assistant line has Claude Code's envelope.
func wellFormed(lines []map[string]any, sessionID any) bool {
	n := 0
	for _, l := range lines {
		if l["type"] != "user" && l["type"] != "assistant" {
			continue
		}
		n++
		_, hasParent := l["parentUuid"]
		// Claude Code 2.1.328 leaves role out of its assistant lines.
		role := field(l, "message", "role")
		if !hasParent || (role != nil && role != l["type"]) || l["sessionId"] != sessionID || l["uuid"] == nil || l["timestamp"] == nil || l["cwd"] == nil {
			return false
		}
		if _, ok := field(l, "message", "content").([]any); !ok {
			if _, ok := field(l, "message", "content").(string); !ok {
				return false
			}
		}
	}
	return n > 0
}

// lastCopy is the transcript copy of the last hook that took one.
func (r *sideRun) lastCopy() []byte {
	for i := len(r.Hooks) - 1; i >= 0; i-- {
		if r.Hooks[i].Transcript != nil {
			return r.Hooks[i].Transcript
		}
	}
	return nil
}
