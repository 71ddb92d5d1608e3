package lifecycle

import "github.com/tiny-agent/tiny-go/internal/session"

// OperationOutcome maps operationFinished's outcome: completed -> succeeded,
// aborted -> cancelled, anything else -> failed.
func OperationOutcome(o session.Outcome) Outcome {
	switch o {
	case session.OutcomeCompleted:
		return Succeeded
	case session.OutcomeAborted:
		return Cancelled
	}
	return Failed
}

// ToolOutcome maps a result entry's type: success -> succeeded,
// interrupted -> cancelled, anything else -> failed.
func ToolOutcome(r session.ResultType) Outcome {
	switch r {
	case session.ResultSuccess:
		return Succeeded
	case session.ResultInterrupted:
		return Cancelled
	}
	return Failed
}

// ModelOutcome maps how an attempt closed: an entry (code "") -> succeeded,
// stepFailed(aborted) -> cancelled, any other stepFailed -> failed.
func ModelOutcome(stepFailedCode string) Outcome {
	switch stepFailedCode {
	case "":
		return Succeeded
	case session.CodeAborted:
		return Cancelled
	}
	return Failed
}

// ResultOf projects an operationFinished record. answer is the final
// answer text (empty when there is none) and usage the operation's total.
func ResultOf(f *session.OperationFinished, answer string, usage Usage) Result {
	r := Result{
		Outcome:    OperationOutcome(f.Outcome),
		Completion: f.Completion,
		Answer:     answer,
		Usage:      usage,
	}
	if f.Error != nil {
		r.ErrorType = f.Error.Code
		r.ErrorMessage = f.Error.Message
	}
	return r
}
