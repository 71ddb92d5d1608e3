package oneshot

import (
	"errors"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/cli/cmdutil"
	"github.com/tiny-agent/tiny-go/internal/session"
)

// A one-shot run exits 0 only when the operation completed with a whole
// reply: a cut-off reply, a failure, an abort or a block exit 1, and the
// line says which (docs/cli.md).
func TestExitCodeAndOutcomeLine(t *testing.T) {
	cases := []struct {
		res  agent.Result
		code int
		line string
	}{
		{agent.Result{Outcome: session.OutcomeCompleted}, 0, "completed"},
		{agent.Result{Outcome: session.OutcomeCompleted, Completion: session.CompletionTruncated}, 1, "completed (the reply was cut off by the model token limit; its tool calls were not run)"},
		{agent.Result{Outcome: session.OutcomeAborted}, 1, "Aborted."},
		{agent.Result{Outcome: session.OutcomeAborted, Kind: session.OperationCompaction}, 1, "Compaction aborted."},
		{agent.Result{Outcome: session.OutcomeFailed}, 1, "Failed."},
		{agent.Result{Blocked: "attempts_exhausted"}, 1, "blocked: attempts_exhausted"},
	}
	for _, c := range cases {
		code := 0
		var ee cmdutil.ExitError
		if err := exitFor(c.res); errors.As(err, &ee) {
			code = ee.Code
		} else if err != nil {
			t.Fatalf("%+v: %v", c.res, err)
		}
		if code != c.code || describeOutcome(c.res) != c.line {
			t.Errorf("%+v: exit %d %q, want %d %q", c.res, code, describeOutcome(c.res), c.code, c.line)
		}
	}
}
