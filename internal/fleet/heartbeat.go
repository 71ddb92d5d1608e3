package fleet

import (
	"context"
	"sync/atomic"
	"time"

	"go.temporal.io/sdk/activity"
)

// beat heartbeats a running activity from a goroutine of its own until the
// returned stop is called, whatever the activity is doing: unpacking a
// fixture, shipping a baseline, waiting on the agent. A heartbeat that
// waited for those would starve on a big tree, and Temporal would time the
// activity out and give its task to another worker. The details are the
// facts the session has committed so far (progress.Load()).
func beat(ctx context.Context, progress *atomic.Int64) (stop func()) {
	every := heartbeatEvery(activity.GetInfo(ctx).HeartbeatTimeout)
	return beatEvery(ctx, every, progress, func(facts int64) { activity.RecordHeartbeat(ctx, facts) })
}

// beatEvery is beat with the interval and the heartbeat given.
func beatEvery(ctx context.Context, every time.Duration, progress *atomic.Int64, record func(facts int64)) (stop func()) {
	done := make(chan struct{})
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			record(progress.Load())
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return func() { close(done); <-ended }
}

// heartbeatEvery is a third of the heartbeat timeout (the SDK sends at
// most one heartbeat in 80 % of it anyway), at most 10 s.
func heartbeatEvery(timeout time.Duration) time.Duration {
	if timeout <= 0 {
		return 10 * time.Second
	}
	return min(max(timeout/3, 50*time.Millisecond), 10*time.Second)
}
