package lifecycle

import (
	"testing"

	"github.com/tiny-agent/tiny-go/internal/session"
)

func TestOutcomeMapping(t *testing.T) {
	for in, want := range map[session.Outcome]Outcome{
		session.OutcomeCompleted: Succeeded, session.OutcomeAborted: Cancelled,
		session.OutcomeFailed: Failed, "weird": Failed,
	} {
		if got := OperationOutcome(in); got != want {
			t.Errorf("OperationOutcome(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[session.ResultType]Outcome{
		session.ResultSuccess: Succeeded, session.ResultInterrupted: Cancelled,
		session.ResultError: Failed, "": Failed,
	} {
		if got := ToolOutcome(in); got != want {
			t.Errorf("ToolOutcome(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]Outcome{
		"": Succeeded, session.CodeAborted: Cancelled,
		session.CodeModelError: Failed, session.CodeAttemptsExhausted: Failed,
	} {
		if got := ModelOutcome(in); got != want {
			t.Errorf("ModelOutcome(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestResultOf(t *testing.T) {
	r := ResultOf(&session.OperationFinished{
		Outcome: session.OutcomeFailed,
		Error:   &session.ErrorInfo{Code: "model_error", Message: "provider request failed"},
	}, "", Usage{Input: 3})
	if r.Outcome != Failed || r.ErrorType != "model_error" || r.ErrorMessage != "provider request failed" || r.Usage.Input != 3 {
		t.Errorf("failed: %+v", r)
	}
	r = ResultOf(&session.OperationFinished{Outcome: session.OutcomeCompleted, Completion: session.CompletionNormal}, "hi", Usage{})
	if r.Outcome != Succeeded || r.Completion != session.CompletionNormal || r.Answer != "hi" || r.ErrorType != "" {
		t.Errorf("completed: %+v", r)
	}
}
