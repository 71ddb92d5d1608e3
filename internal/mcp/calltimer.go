package mcp

import (
	"context"
	"errors"
	"sync"
	"time"
)

// errCallTimeout ends a call that ran out of its call timeout.
var errCallTimeout = errors.New("call timeout")

// callTimers are the timeouts of a client's calls in flight. While the
// user answers a server's question (elicitation) they stand still: the
// time a person takes to read a form is not the server's.
type callTimers struct {
	mu     sync.Mutex
	paused int
	timers map[*callTimer]struct{}
}

type callTimer struct {
	timer *time.Timer
	left  time.Duration
	since time.Time
}

// start returns ctx ended with errCallTimeout after d of unpaused time.
func (ts *callTimers) start(ctx context.Context, d time.Duration) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	t := &callTimer{left: d, since: time.Now()}
	ts.mu.Lock()
	if ts.timers == nil {
		ts.timers = map[*callTimer]struct{}{}
	}
	ts.timers[t] = struct{}{}
	t.timer = time.AfterFunc(d, func() { cancel(errCallTimeout) })
	if ts.paused > 0 {
		t.timer.Stop()
	}
	ts.mu.Unlock()
	return ctx, func() {
		ts.mu.Lock()
		delete(ts.timers, t)
		t.timer.Stop()
		ts.mu.Unlock()
		cancel(context.Canceled)
	}
}

// pause stops every timer until the matching resume.
func (ts *callTimers) pause() {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.paused++
	if ts.paused > 1 {
		return
	}
	for t := range ts.timers {
		if t.timer.Stop() {
			t.left -= time.Since(t.since)
		}
	}
}

func (ts *callTimers) resume() {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.paused--
	if ts.paused > 0 {
		return
	}
	for t := range ts.timers {
		t.since = time.Now()
		t.timer.Reset(max(t.left, 0))
	}
}

// timedOut reports whether ctx (from start) ended by its call timeout.
func timedOut(ctx context.Context) bool {
	return errors.Is(context.Cause(ctx), errCallTimeout)
}
