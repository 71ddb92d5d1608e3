package hooks

import (
	"context"
	"fmt"
	"time"
)

// Callback is a hook the host program runs in its own process (the Agent
// SDK's hook callbacks, asked over the control protocol): it gets the
// hook's input JSON and returns what a command hook would print on
// stdout. An error is a hook that failed.
type Callback func(ctx context.Context, input []byte) ([]byte, error)

// NewCallbackHook is a hook of ev that runs call instead of a command;
// name is how messages refer to it and source where it came from.
func NewCallbackHook(ev Event, matcher string, timeout time.Duration, name, source string, call Callback) (Hook, error) {
	if !known(ev) {
		return Hook{}, fmt.Errorf("unknown hook event %q (known: %s)", ev, eventList())
	}
	match, err := compileMatcher(matcher)
	if err != nil {
		return Hook{}, fmt.Errorf("hooks.%s: matcher %q: %w", ev, matcher, err)
	}
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	return Hook{Event: ev, Matcher: matcher, Command: name, Timeout: timeout, Source: source, match: match, call: call}, nil
}

// Add adds hooks to the runner's while it runs (an SDK's initialize);
// they take part from the next event on.
func (r *Runner) Add(hs ...Hook) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.added = append(r.added, hs...)
}

// on is the hooks of ev: the configured ones, then the added ones.
func (r *Runner) on(ev Event) []Hook {
	hs := r.opt.Config.On(ev)
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, h := range r.added {
		if h.Event == ev {
			hs = append(hs, h)
		}
	}
	return hs
}

// runCallback runs a callback hook within its timeout; its answer is the
// stdout of a hook that exited 0.
func runCallback(ctx context.Context, h Hook, input []byte) ran {
	tctx, cancel := context.WithTimeout(ctx, h.Timeout)
	defer cancel()
	out, err := h.call(tctx, input)
	switch {
	case err != nil && tctx.Err() != nil && ctx.Err() == nil:
		return ran{code: -1, timedOut: true, err: fmt.Errorf("did not answer within %s", h.Timeout)}
	case err != nil:
		return ran{code: -1, err: err}
	case len(out) > MaxOutput:
		return ran{truncated: true}
	}
	return ran{stdout: out}
}
