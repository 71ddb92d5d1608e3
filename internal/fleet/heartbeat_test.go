package fleet

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The heartbeat goes on, with the progress of the moment, while the
// activity is busy elsewhere (here: asleep, as in a long upload), and
// stops when it is told to.
func TestBeatGoesOnWhileTheActivityIsBusy(t *testing.T) {
	var progress atomic.Int64
	var mu sync.Mutex
	var seen []int64
	stop := beatEvery(context.Background(), 20*time.Millisecond, &progress, func(facts int64) {
		mu.Lock()
		seen = append(seen, facts)
		mu.Unlock()
	})
	time.Sleep(150 * time.Millisecond) // busy: no heartbeat from the activity itself
	progress.Store(42)
	time.Sleep(150 * time.Millisecond)
	stop()
	mu.Lock()
	n, last := len(seen), seen[len(seen)-1]
	mu.Unlock()
	if n < 4 || last != 42 {
		t.Fatalf("%d heartbeats, the last with %d facts; want several, the last with 42", n, last)
	}
	time.Sleep(60 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != n {
		t.Errorf("heartbeats after stop: %d, then %d", n, len(seen))
	}
}

func TestHeartbeatEvery(t *testing.T) {
	for timeout, want := range map[time.Duration]time.Duration{0: 10 * time.Second, 30 * time.Second: 10 * time.Second,
		6 * time.Second: 2 * time.Second, 60 * time.Millisecond: 50 * time.Millisecond} {
		if got := heartbeatEvery(timeout); got != want {
			t.Errorf("heartbeatEvery(%v) = %v, want %v", timeout, got, want)
		}
	}
}
