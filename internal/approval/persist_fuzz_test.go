package approval

import (
	"bytes"
	"github.com/tiny-agent/tiny-go/internal/statekey"
	"strings"
	"testing"
)

// FuzzParseRules: any bytes in approvals.jsonl (torn, garbled, hostile)
// load without panicking, and every rule loaded has a shape the gate
// writes; a line written by persist's encoding loads back as written.
func FuzzParseRules(f *testing.F) {
	f.Add([]byte(`{"allow":[["bash","cmd","ls"]]}` + "\n"))
	f.Add([]byte(`{"allow":[["write","tool"],["mcp__fx__get","tool"]]}` + "\n" + `{"allow":[["bash","cmd","git"]]`))
	f.Add([]byte("\n\n{}\nnot json\n"))
	f.Add([]byte(`{"allow":[["bash","cmd"],["","tool"],["a","b","c","d"]]}` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rules, _ := parseRules("approvals/fuzz", data)
		for _, r := range rules {
			if !validRule(strings.Split(r, "\x00")) {
				t.Fatalf("loaded an invalid rule %q", r)
			}
		}
		// Appending a complete line never loses the rules before it (a
		// torn tail is cut before the next append, so it ends in "\n").
		if len(data) > 0 && data[len(data)-1] == '\n' {
			more := append(bytes.Clone(data), []byte(fuzzLine(t))...)
			got, _ := parseRules("approvals/fuzz", more)
			if len(got) != len(rules)+1 || got[len(got)-1] != "bash\x00cmd\x00zz-fuzz" {
				t.Fatalf("an appended rule did not load after %q: %q", data, got)
			}
		}
	})
}

func fuzzLine(t *testing.T) string {
	allow := `[["bash","cmd","zz-fuzz"]]`
	mac, err := statekey.Hex("approvals/fuzz", []byte(allow))
	if err != nil {
		t.Fatal(err)
	}
	return `{"allow":` + allow + `,"mac":"` + mac + `"}` + "\n"
}
