package agent

import (
	"context"

	"github.com/go-json-experiment/json/jsontext"
)

// BeforeEffect is called after a tool call's toolStarted fact is durable
// and before its effect starts (checkpoints are keyed by that durable
// intent). It may block, bounded by ctx, which the tool phase's abort
// cancels. The returned func, when not nil, is called once the effect has
// ended, whatever its outcome.
type BeforeEffect func(ctx context.Context, toolStartedID, toolName string, arguments jsontext.Value) (after func())

// beforeEffect runs the configured hook; its after func is never nil.
func (a *Agent) beforeEffect(ctx context.Context, toolStartedID, toolName string, arguments jsontext.Value) func() {
	if a.cfg.BeforeEffect == nil {
		return func() {}
	}
	if after := a.cfg.BeforeEffect(ctx, toolStartedID, toolName, arguments); after != nil {
		return after
	}
	return func() {}
}

// ResultNote returns text to append to a tool call's result, once the
// effect ended (after BeforeEffect's after func) and before the result
// is committed: the note is part of the durable result, so a resume,
// which never runs a committed call again, never asks for it again. It
// may block, bounded by ctx (the tool phase's, which an abort cancels).
type ResultNote func(ctx context.Context, toolStartedID, toolName string, arguments jsontext.Value, failed bool) string

// resultNote runs the configured ResultNote.
func (a *Agent) resultNote(ctx context.Context, toolStartedID, toolName string, arguments jsontext.Value, failed bool) string {
	if a.cfg.ResultNote == nil {
		return ""
	}
	return a.cfg.ResultNote(ctx, toolStartedID, toolName, arguments, failed)
}

// Config returns the configuration the agent was built with, so that an
// agent like it can be built on another session (a conversation rewind
// continues in a fork).
func (a *Agent) Config() Config { return a.cfg }
