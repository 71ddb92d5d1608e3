package fleet

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/session"
	"github.com/tiny-agent/tiny-go/internal/session/sessiontest"
)

// twoSteps is a session of two bash calls; at[k] is its length after
// each mark: "started 2" (the second call started, the first settled),
// "settled 2", "finished".
func twoSteps() (data []byte, at map[string]int) {
	b := sessiontest.NewBuilder()
	at = map[string]int{}
	op := b.Prompt("run the two steps")
	for k, id := range []string{"call_1", "call_2"} {
		step, att := b.Attempt(op, session.StepAssistant, "")
		call := sessiontest.Call(id, "bash", `{"command":"echo step >> work.txt"}`)
		b.Commit(sessiontest.Reply(step, att, session.StopReasonToolUse, "", call))
		started, result := b.StartTool(op, step, b.Boundary(), 0, call, "never", "builtin:bash:v1")
		if k == 1 {
			at["started 2"] = len(b.Bytes())
		}
		b.Commit(sessiontest.ToolResult(step, started, result, call, session.ResultSuccess, "done"))
	}
	at["settled 2"] = len(b.Bytes())
	step, att := b.Attempt(op, session.StepAssistant, "")
	reply := sessiontest.Reply(step, att, session.StopReasonStop, "both done")
	reply.ID = b.ID()
	b.Commit(reply, sessiontest.Finished(op, session.OperationRun, session.OutcomeCompleted, session.CompletionNormal, reply.ID, nil))
	at["finished"] = len(b.Bytes())
	return b.Bytes(), at
}

// A command that settles while a snapshot is taken (its effect after the
// scan read the file, its result before the session is read again) does
// not go to the store as settled without its effect: the retry would
// find the step done and its change missing. And its effect is shipped
// without waiting for another step to settle.
func TestAResultThatSettlesDuringTheScanWaitsForItsEffect(t *testing.T) {
	ctx := context.Background()
	s, blobs, repo := baselined(t)
	data, at := twoSteps()
	sess := filepath.Join(repo, ".tiny-agent", "sessions", "s.jsonl")
	write := func(n int, work string) {
		if err := os.MkdirAll(filepath.Dir(sess), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(sess, data[:n], 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(repo, "work.txt"), []byte(work), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Step 1 settled and step 2 started when the syncer looks; step 2
	// ends while it scans.
	check := func(when string) (work string, settled bool) {
		work, got := restored(t, blobs)
		settled = len(got) >= at["settled 2"]
		if settled != strings.Contains(work, "step 2") {
			t.Fatalf("%s: the store holds step 2 settled=%v with the workspace %q", when, settled, work)
		}
		return work, settled
	}
	write(at["started 2"], "step 1\n")
	scans := 0
	s.scanned = func() {
		if scans++; scans == 2 {
			check("between the two snapshots")
		}
		write(at["settled 2"], "step 1\nstep 2\n")
	}
	if err := s.step(ctx); err != nil {
		t.Fatal(err)
	}
	s.scanned = nil
	if scans != 2 {
		t.Errorf("%d snapshots for the step, want 2 (the second ships what settled during the first)", scans)
	}
	check("after the snapshots")
	// The agent ends; the next look ships step 2's effect with its result.
	write(at["finished"], "step 1\nstep 2\n")
	if err := s.step(ctx); err != nil {
		t.Fatal(err)
	}
	if work, settled := check("after the next look"); !settled || work != "step 1\nstep 2\n" {
		t.Fatalf("after the next look: settled=%v, workspace %q", settled, work)
	}
}
