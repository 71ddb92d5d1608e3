package lifecycle

import (
	"fmt"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
)

// members lists the JSON members of each event after "type" and
// "timestamp", transcribed from the events.md table; a trailing "?" marks
// an optional member, omitted when empty.
func members(n Name) []string {
	switch n {
	case NameStartupStarted:
		return []string{"model", "runtime", "plugins", "mcp"}
	case NameSessionAttached:
		return []string{"sessionId", "resumed"}
	case NameMCPStarted:
		return []string{"server"}
	case NameMCPCompleted:
		return []string{"server", "durationMs", "outcome", "protocolVersion?", "toolCount?", "errorType?"}
	case NameStartupCompleted:
		return []string{"durationMs", "outcome", "errorType?"}
	case NameOperationStarted, NameOperationRecovered:
		return []string{"sessionId", "operationId", "operationKind", "recovery"}
	case NameModelStarted:
		return []string{"sessionId", "operationId", "operationKind", "stepId", "attemptId", "attempt", "recovery"}
	case NameModelCompleted:
		return []string{"sessionId", "operationId", "operationKind", "stepId", "attemptId", "recovery", "durationMs", "outcome", "usage?", "errorType?"}
	case NameModelReconciled:
		return []string{"sessionId", "operationId", "operationKind", "stepId", "attemptId", "recovery", "outcome", "errorType?"}
	case NameToolAdmitted:
		return []string{"sessionId", "operationId", "stepId", "toolStartedId", "toolCallId", "tool", "replay", "recovery"}
	case NameToolStarted:
		return []string{"sessionId", "operationId", "stepId", "attemptId", "parentAttemptId", "toolStartedId", "toolCallId", "tool", "recovery"}
	case NameToolCompleted:
		return []string{"sessionId", "operationId", "stepId", "attemptId", "parentAttemptId", "toolStartedId", "toolCallId", "tool", "recovery", "durationMs", "outcome"}
	case NameCancelRequested:
		return []string{"sessionId", "operationId", "operationKind", "phase", "toolCallId?", "recovery"}
	case NameOperationCompleted:
		return []string{"sessionId", "operationId", "operationKind", "recovery", "durationMs", "outcome", "completion?", "answer?", "usage", "errorType?", "errorMessage?"}
	}
	return nil
}

// MarshalJSONTo writes e as one JSON object with exactly the members of its
// event (see members). It fails for an unknown Name.
func (e Event) MarshalJSONTo(enc *jsontext.Encoder) error {
	ms := members(e.Name)
	if ms == nil {
		return fmt.Errorf("lifecycle: unknown event %q", e.Name)
	}
	w := writer{enc: enc}
	w.token(jsontext.BeginObject)
	w.str("type", string(e.Name))
	w.str("timestamp", e.Timestamp())
	for _, m := range ms {
		key, optional := strings.CutSuffix(m, "?")
		e.member(&w, key, optional)
	}
	w.token(jsontext.EndObject)
	return w.err
}

func (e *Event) member(w *writer, key string, optional bool) {
	str := func(v string) {
		if !optional || v != "" {
			w.str(key, v)
		}
	}
	switch key {
	case "model":
		str(e.Model)
	case "runtime":
		w.str(key, Runtime)
	case "plugins":
		w.strs(key, e.Plugins)
	case "mcp":
		w.strs(key, e.MCP)
	case "sessionId":
		str(e.SessionID)
	case "resumed":
		w.boolean(key, e.Resumed)
	case "server":
		str(e.Server)
	case "protocolVersion":
		str(e.ProtocolVersion)
	case "toolCount":
		if e.ToolCount != nil || !optional {
			n := 0
			if e.ToolCount != nil {
				n = *e.ToolCount
			}
			w.int(key, int64(n))
		}
	case "operationId":
		str(e.OperationID)
	case "operationKind":
		str(string(e.OperationKind))
	case "stepId":
		str(e.StepID)
	case "attemptId":
		str(e.AttemptID)
	case "attempt":
		w.int(key, int64(e.Attempt))
	case "parentAttemptId":
		str(e.ParentAttemptID)
	case "toolStartedId":
		str(e.ToolStartedID)
	case "toolCallId":
		str(e.ToolCallID)
	case "tool":
		str(e.Tool)
	case "replay":
		str(e.Replay)
	case "recovery":
		w.boolean(key, e.Recovery)
	case "phase":
		str(string(e.Phase))
	case "durationMs":
		w.int(key, e.DurationMs)
	case "outcome":
		str(string(e.Outcome))
	case "usage":
		if e.Usage != nil || !optional {
			var u Usage
			if e.Usage != nil {
				u = *e.Usage
			}
			w.usage(key, u)
		}
	case "completion":
		str(string(e.Completion))
	case "answer":
		str(e.Answer)
	case "errorType":
		str(e.ErrorType)
	case "errorMessage":
		str(e.ErrorMessage)
	default:
		w.fail(fmt.Errorf("lifecycle: no field for member %q", key))
	}
}

// writer writes tokens and keeps the first error, so member code stays
// linear.
type writer struct {
	enc *jsontext.Encoder
	err error
}

func (w *writer) fail(err error) {
	if w.err == nil {
		w.err = err
	}
}

func (w *writer) token(t jsontext.Token) {
	if w.err == nil {
		w.fail(w.enc.WriteToken(t))
	}
}

func (w *writer) str(key, v string) {
	w.token(jsontext.String(key))
	w.token(jsontext.String(v))
}

func (w *writer) strs(key string, vs []string) {
	w.token(jsontext.String(key))
	w.token(jsontext.BeginArray)
	for _, v := range vs {
		w.token(jsontext.String(v))
	}
	w.token(jsontext.EndArray)
}

func (w *writer) int(key string, v int64) {
	w.token(jsontext.String(key))
	w.token(jsontext.Int(v))
}

func (w *writer) boolean(key string, v bool) {
	w.token(jsontext.String(key))
	w.token(jsontext.Bool(v))
}

func (w *writer) usage(key string, u Usage) {
	w.token(jsontext.String(key))
	w.token(jsontext.BeginObject)
	w.int("input", u.Input)
	w.int("output", u.Output)
	w.int("cacheRead", u.CacheRead)
	w.int("cacheWrite", u.CacheWrite)
	w.token(jsontext.String("cacheHitRate"))
	w.token(jsontext.Float(u.CacheHitRate()))
	w.token(jsontext.EndObject)
}
