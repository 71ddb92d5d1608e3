package agent

import "sync"

// eventQueue delivers events in the order they were pushed. Events are pushed
// while the commit lock is held, right after their commit, and delivered
// after it is released, so no sink ever runs under the commit lock and
// an abort's cancel.requested can never overtake (or be overtaken by) the
// events of the commits around it.
type eventQueue struct {
	mu       sync.Mutex
	cond     *sync.Cond
	pending  []Event
	draining bool
}

func newEventQueue() *eventQueue {
	q := &eventQueue{}
	q.cond = sync.NewCond(&q.mu)
	return q
}

func (q *eventQueue) push(ns ...Event) {
	if len(ns) == 0 {
		return
	}
	q.mu.Lock()
	q.pending = append(q.pending, ns...)
	q.mu.Unlock()
}

// drain delivers every pending event; when another goroutine is already
// delivering, it waits for that to finish, so an event pushed before drain is
// delivered before drain returns.
func (q *eventQueue) drain(sink func(Event)) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.draining {
		q.cond.Wait()
	}
	q.draining = true
	for len(q.pending) > 0 {
		batch := q.pending
		q.pending = nil
		q.mu.Unlock()
		for _, ev := range batch {
			sink(ev)
		}
		q.mu.Lock()
	}
	q.draining = false
	q.cond.Broadcast()
}
