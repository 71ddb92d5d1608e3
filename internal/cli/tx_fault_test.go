package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRewindAfterKillBeforeStates: tiny-go killed after a command's apply
// but before its states.json and after record were written: the next
// rewind still removes what the command created and brings back what it
// deleted.
func TestRewindAfterKillBeforeStates(t *testing.T) {
	seed := `mkdir -p keep && echo k > keep/k && echo gone > gone.txt`
	tt := runTxTurnThen(t, seed, func(dir string) {
		states, _ := filepath.Glob(filepath.Join(dir, ".tiny-agent", "checkpoints", "tx", "*", "states.json"))
		if len(states) != 1 {
			t.Fatalf("%d states files", len(states))
		}
		os.Remove(states[0])
		idx, _ := filepath.Glob(filepath.Join(dir, ".tiny-agent", "sessions", "*.d", "checkpoints.jsonl"))
		if len(idx) != 1 {
			t.Fatalf("%d indexes", len(idx))
		}
		data, err := os.ReadFile(idx[0])
		if err != nil {
			t.Fatal(err)
		}
		var kept []string
		for line := range strings.Lines(string(data)) {
			if !strings.Contains(line, `"tx"`) || !strings.Contains(line, `"after"`) {
				kept = append(kept, line)
			}
		}
		if len(kept) == len(strings.Split(strings.TrimSpace(string(data)), "\n")) {
			t.Fatalf("no after record of a transaction in\n%s", data)
		}
		os.WriteFile(idx[0], []byte(strings.Join(kept, "")), 0o600)
	}, "mkdir -p made/deep && for i in $(seq 1 50); do echo $i > made/deep/f$i; done && echo new > new.txt && rm gone.txt")
	if d := listingDiff(tt.rewound, tt.before); d != "" {
		t.Fatalf("the rewind did not give the tree back:\n%s\nrewind said:\n%s", d, tt.rewindOut)
	}
}
