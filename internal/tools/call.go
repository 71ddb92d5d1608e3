package tools

import "context"

// startedKey carries the toolStarted id of the call a tool runs for.
type startedKey struct{}

// WithStartedID is ctx for running the call whose toolStarted fact has id.
func WithStartedID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, startedKey{}, id)
}

// StartedID is the toolStarted id of the call being run, "" when unknown.
// A tool whose effect is durable on its own (a subagent's session) keys it
// by this id, so the call can be continued after a crash.
func StartedID(ctx context.Context) string {
	id, _ := ctx.Value(startedKey{}).(string)
	return id
}

// Continuable is a tool whose started call, when a crash left it without a
// result, is continued rather than answered "interrupted": its effect is a
// durable record of its own keyed by StartedID (a subagent's session),
// which resumes where it stopped and repeats nothing. The call's replay
// declaration stays "never": no runtime runs it again from the start.
type Continuable interface {
	Tool
	ContinuesAfterCrash() bool
}

// Concurrent is a tool several calls of which, in one reply, may run at
// the same time (subagents); other calls run one after another.
type Concurrent interface {
	Tool
	RunsConcurrently() bool
}
