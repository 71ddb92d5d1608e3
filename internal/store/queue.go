package store

import (
	"context"
	"sync"
)

// fifo is a mutual-exclusion lock that is granted strictly in arrival
// order (sync.Mutex does not promise that), and whose wait can be
// abandoned through a context. The zero value is unlocked.
type fifo struct {
	mu      sync.Mutex
	held    bool
	waiters []chan struct{} // in arrival order; closed to hand over the lock
}

// acquire takes the lock, waiting behind every earlier caller. If ctx ends
// first it returns ctx.Err() without the lock.
func (q *fifo) acquire(ctx context.Context) error {
	q.mu.Lock()
	if !q.held {
		q.held = true
		q.mu.Unlock()
		return nil
	}
	ch := make(chan struct{})
	q.waiters = append(q.waiters, ch)
	q.mu.Unlock()

	select {
	case <-ch:
		return nil
	case <-ctx.Done():
	}
	q.mu.Lock()
	for i, w := range q.waiters {
		if w == ch {
			q.waiters = append(q.waiters[:i], q.waiters[i+1:]...)
			q.mu.Unlock()
			return ctx.Err()
		}
	}
	q.mu.Unlock()
	// The lock was handed over while ctx ended: pass it on.
	q.release()
	return ctx.Err()
}

// release hands the lock to the longest waiter, or unlocks it.
func (q *fifo) release() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.waiters) == 0 {
		q.held = false
		return
	}
	close(q.waiters[0])
	q.waiters = q.waiters[1:]
}

// waiting reports how many callers wait for the lock (tests).
func (q *fifo) waiting() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.waiters)
}
