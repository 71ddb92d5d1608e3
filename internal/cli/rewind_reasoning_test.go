package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tiny-agent/tiny-go/internal/providertest"
	"github.com/tiny-agent/tiny-go/internal/reasoning"
)

// TestRewindForkKeepsItsOwnReasoning: after /rewind forks the
// conversation inside a running process, the reasoning details of the
// fork's new replies are stored beside the fork (where a resume of the
// fork reads them), never beside the source session.
func TestRewindForkKeepsItsOwnReasoning(t *testing.T) {
	detail := func(id string) []jsontext.Value {
		return []jsontext.Value{jsontext.Value(`{"type":"reasoning.encrypted","id":"` + id + `","data":"` + id + `-data"}`)}
	}
	srv := providertest.New(t,
		providertest.Reply{Text: "first", ReasoningDetails: detail("SOURCE-ONE")},
		providertest.Reply{Text: "second", ReasoningDetails: detail("SOURCE-TWO")},
		providertest.Reply{Text: "in the fork", ReasoningDetails: detail("FORK-ONLY")},
	)
	c := newCLI(t, srv)
	code, stdout, stderr := c.main("one\ntwo\n/rewind 2\ny\nthree\n/exit\n", "--approval", "auto")
	if code != 0 || !strings.Contains(stdout, "in the fork") {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	i := strings.Index(stdout, "Now in session ")
	if i < 0 {
		t.Fatalf("no fork:\n%s", stdout)
	}
	forkID := strings.TrimSuffix(strings.Fields(stdout[i+len("Now in session "):])[0], ":")
	files := c.sessions()
	if len(files) != 2 {
		t.Fatalf("sessions: %q", files)
	}
	for _, f := range files {
		data, _ := os.ReadFile(filepath.Join(strings.TrimSuffix(f, ".jsonl")+".d", reasoning.FileName))
		isFork := strings.Contains(filepath.Base(f), forkID)
		if isFork {
			// The fork shares turn 1 with its source and has its own reply.
			if !strings.Contains(string(data), "SOURCE-ONE") || !strings.Contains(string(data), "FORK-ONLY") || strings.Contains(string(data), "SOURCE-TWO") {
				t.Errorf("the fork's reasoning details:\n%s", data)
			}
		} else if strings.Contains(string(data), "FORK-ONLY") || !strings.Contains(string(data), "SOURCE-TWO") {
			t.Errorf("the source's reasoning details:\n%s", data)
		}
	}
}
