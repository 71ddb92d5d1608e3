package agent

import "sync"

// note is one observer call, queued so that observers see events in the
// order of the commits that settle them.
type note func(Observer)

// eventQueue delivers notes in the order they were pushed. Notes are pushed
// while the commit lock is held, right after their commit, and delivered
// after it is released, so no observer ever runs under the commit lock and
// an abort's cancel.requested can never overtake (or be overtaken by) the
// events of the commits around it.
type eventQueue struct {
	mu       sync.Mutex
	cond     *sync.Cond
	pending  []note
	draining bool
}

func newEventQueue() *eventQueue {
	q := &eventQueue{}
	q.cond = sync.NewCond(&q.mu)
	return q
}

func (q *eventQueue) push(ns ...note) {
	if len(ns) == 0 {
		return
	}
	q.mu.Lock()
	q.pending = append(q.pending, ns...)
	q.mu.Unlock()
}

// drain delivers every pending note; when another goroutine is already
// delivering, it waits for that to finish, so a note pushed before drain is
// delivered before drain returns.
func (q *eventQueue) drain(o Observer) {
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
		for _, n := range batch {
			n(o)
		}
		q.mu.Lock()
	}
	q.draining = false
	q.cond.Broadcast()
}

// emit delivers n after everything queued before it.
func (a *Agent) emit(n note) {
	a.events.push(n)
	a.events.drain(a.obs)
}
