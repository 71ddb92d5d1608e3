package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/statekey"

	"github.com/tiny-agent/tiny-go/internal/providertest"
)

// A session rewritten in place between runs: `session verify` names the
// line, a resume refuses it and says how to repair, `session repair` cuts
// it back to the last verified commit (keeping the cut bytes), and the
// session then resumes without the forged line.
func TestSessionRepairRoundTrip(t *testing.T) {
	srv := providertest.New(t, providertest.Reply{Text: "one"}, providertest.Reply{Text: "two"}, providertest.Reply{Text: "three"})
	c := newCLI(t, srv)
	if code, _, stderr := c.main("", "first"); code != 0 {
		t.Fatalf("first: %d %s", code, stderr)
	}
	id := c.state().Header.ID
	if code, _, stderr := c.main("", "--session", id, "second"); code != 0 {
		t.Fatalf("second: %d %s", code, stderr)
	}
	path := c.sessions()[0]
	b := mustRead(t, path)
	forged := bytes.Replace(b, []byte(`"content":"second"`), []byte(`"content":"SECOND"`), 1)
	if err := os.WriteFile(path, forged, 0o600); err != nil {
		t.Fatal(err)
	}
	line := bytes.Count(b[:bytes.Index(b, []byte(`"content":"second"`))], []byte{'\n'}) + 1

	code, stdout, _ := c.main("", "session", "verify", id)
	if code != 1 || !strings.Contains(stdout, "DIGEST_MISMATCH at line "+strconv.Itoa(line)) {
		t.Fatalf("verify: %d\n%s", code, stdout)
	}
	code, _, stderr := c.main("", "--session", id, "third")
	if code == 0 || !strings.Contains(stderr, "session repair") {
		t.Fatalf("resume of a forged session: %d\n%s", code, stderr)
	}
	code, stdout, stderr = c.main("", "session", "repair", id)
	if code != 0 || !strings.Contains(stdout, "removed lines "+strconv.Itoa(line)+"-") || !strings.Contains(stdout, ".cut") {
		t.Fatalf("repair: %d\n%s%s", code, stdout, stderr)
	}
	if code, stdout, _ := c.main("", "session", "verify", id); code != 0 || !strings.Contains(stdout, "integrity:  ok") {
		t.Fatalf("verify after repair: %d\n%s", code, stdout)
	}
	if code, _, stderr := c.main("", "--session", id, "third"); code != 0 {
		t.Fatalf("resume after repair: %d %s", code, stderr)
	}
	for _, m := range c.state().Transcript {
		if m.Content != nil && strings.Contains(*m.Content, "SECOND") {
			t.Fatal("the forged message survived the repair")
		}
	}
	if code, stdout, _ := c.main("", "session", "repair", id); code != 0 || !strings.Contains(stdout, "nothing to repair") {
		t.Fatalf("second repair: %d %s", code, stdout)
	}
}

// A session cut at a line boundary before a completed bash call's intent
// is refused on resume, with its integrity records (TRUNCATED) and without
// them (the checkpoint index names the call): the call never runs again.
func TestTruncatedSessionIsNotResumed(t *testing.T) {
	for _, records := range []bool{true, false} {
		t.Run(map[bool]string{true: "with records", false: "without records"}[records], func(t *testing.T) {
			srv := providertest.New(t,
				providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c1", "bash", `{"command":"echo x >> ran"}`)}},
				providertest.Reply{Text: "done"},
				providertest.Reply{Text: "never"},
			)
			c := newCLI(t, srv)
			if code, _, stderr := c.main("", "go"); code != 0 {
				t.Fatalf("run: %d %s", code, stderr)
			}
			id := c.state().Header.ID
			path := c.sessions()[0]
			b := mustRead(t, path)
			i := bytes.Index(b, []byte(`"kind":"toolStarted"`))
			if i < 0 {
				i = bytes.Index(b, []byte(`"toolStarted"`))
			}
			if i < 0 {
				t.Fatalf("no toolStarted in\n%s", b)
			}
			cut := bytes.LastIndexByte(b[:i], '\n') + 1
			if err := os.WriteFile(path, b[:cut], 0o600); err != nil {
				t.Fatal(err)
			}
			if !records {
				if err := os.Remove(strings.TrimSuffix(path, ".jsonl") + ".d/integrity"); err != nil {
					t.Fatal(err)
				}
			}
			want := "TRUNCATED"
			if !records {
				// tiny-go's mark beside its key says it sealed records:
				// their removal alone is refused.
				if code, _, stderr := c.main("", "--session", id); code == 0 || !strings.Contains(stderr, "UNSEALED") {
					t.Fatalf("resume without the sealed records: %d\n%s", code, stderr)
				}
				// Without the mark too (a copy from elsewhere), the
				// checkpoint index still tells.
				_, _, mark := statekey.Marked("sealed-sessions", filepath.Base(path))
				if err := os.Remove(mark); err != nil {
					t.Fatal(err)
				}
				want = "was truncated: its checkpoint index records tool call"
			}
			code, _, stderr := c.main("", "--session", id)
			if code == 0 || !strings.Contains(stderr, want) {
				t.Fatalf("resume of a truncated session: %d\n%s", code, stderr)
			}
			if got := string(mustRead(t, c.dir+"/ran")); got != "x\n" {
				t.Fatalf("the call ran again: %q", got)
			}
		})
	}
}
