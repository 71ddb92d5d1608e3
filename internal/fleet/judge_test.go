package fleet

import "testing"

// A failed test.sh after an agent that exited with an error says both:
// the agent's last line is most often why nothing was done (a retried
// task's session refused by tiny-go read "test.sh exited 2" alone).
func TestTestFailedNamesTheAgentsFailure(t *testing.T) {
	run := agentRun{exit: 1, stderr: "tiny-go: session s.jsonl is corrupt: UNSEALED at line 1\n"}
	if got, want := testFailed(2, run), "test.sh exited 2 (the agent exited 1: tiny-go: session s.jsonl is corrupt: UNSEALED at line 1)"; got != want {
		t.Errorf("testFailed = %q, want %q", got, want)
	}
	run.exit = 0
	if got := testFailed(2, run); got != "test.sh exited 2" {
		t.Errorf("testFailed after a clean exit = %q", got)
	}
}
