package providertest

import (
	"fmt"
	"os"
	"time"

	"github.com/go-json-experiment/json"
)

// Script is the JSON form of a list of replies, for Serve in a helper
// process. Member names are those of the Reply, ToolCall and Usage json
// tags; unknown members are errors, so a typo is not silently ignored.
// Delay is a Go duration string. Handler cannot be scripted.
//
//	{"replies": [
//	  {"toolCalls": [{"id": "c1", "name": "read", "arguments": "{\"path\":\"a.txt\"}"}],
//	   "usage": {"promptTokens": 120, "completionTokens": 9, "cachedTokens": 100}},
//	  {"text": "done", "delay": "50ms"},
//	  {"status": 429, "body": "{\"error\":{\"message\":\"slow down\"}}"},
//	  {"text": "partial answer", "cut": true, "after": 2}
//	]}
type Script struct {
	Replies []Reply `json:"replies"`
}

// ParseScript decodes and validates a script.
func ParseScript(data []byte) ([]Reply, error) {
	var s Script
	if err := json.Unmarshal(data, &s, scriptOptions()); err != nil {
		return nil, fmt.Errorf("provider script: %w", err)
	}
	for i, r := range s.Replies {
		if err := r.validate(); err != nil {
			return nil, fmt.Errorf("provider script: reply %d: %w", i, err)
		}
	}
	return s.Replies, nil
}

// MarshalScript encodes replies in the script format. Handlers are left
// out.
func MarshalScript(replies []Reply) ([]byte, error) {
	return json.Marshal(Script{Replies: replies}, scriptOptions())
}

// scriptOptions rejects unknown members and codes durations as strings
// (the JSON package has no default representation for them).
func scriptOptions() json.Options {
	return json.JoinOptions(
		json.RejectUnknownMembers(true),
		json.WithMarshalers(json.MarshalFunc(func(d time.Duration) ([]byte, error) {
			return json.Marshal(d.String())
		})),
		json.WithUnmarshalers(json.UnmarshalFunc(func(b []byte, d *time.Duration) error {
			var s string
			if err := json.Unmarshal(b, &s); err != nil {
				return err
			}
			v, err := time.ParseDuration(s)
			if err != nil {
				return err
			}
			*d = v
			return nil
		})),
	)
}

// LoadScript reads a script file (see Script).
func LoadScript(path string) ([]Reply, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	replies, err := ParseScript(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return replies, nil
}
