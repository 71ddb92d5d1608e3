package provider

import (
	"context"
	"errors"
	"sync"
	"time"
)

// Causes the watchdog cancels a request with.
var (
	errConnectTimeout = errors.New("provider connect timeout")
	errIdleTimeout    = errors.New("provider idle timeout")
	errRequestTimeout = errors.New("provider request timeout")
)

// watchdog cancels a request that makes no progress. Until the connection
// is obtained it allows connect; afterwards it allows idle between any two
// pieces of progress (request written, response bytes read). One timer is
// re-armed lazily, so touch is cheap enough to call on every read.
type watchdog struct {
	cancel  context.CancelCauseFunc
	connect time.Duration
	idle    time.Duration

	mu     sync.Mutex
	timer  *time.Timer
	cause  error
	limit  time.Duration
	last   time.Time
	closed bool
}

func startWatchdog(cancel context.CancelCauseFunc, connect, idle time.Duration) *watchdog {
	w := &watchdog{
		cancel:  cancel,
		connect: connect,
		idle:    idle,
		cause:   errConnectTimeout,
		limit:   connect,
		last:    time.Now(),
	}
	w.mu.Lock()
	w.timer = time.AfterFunc(connect, w.fire)
	w.mu.Unlock()
	return w
}

func (w *watchdog) fire() {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return
	}
	if rest := w.limit - time.Since(w.last); rest > 0 {
		w.timer.Reset(rest)
		w.mu.Unlock()
		return
	}
	w.closed = true
	cause := w.cause
	w.mu.Unlock()
	w.cancel(cause)
}

// connected ends the connect phase. It may be called more than once.
func (w *watchdog) connected() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed || w.cause == errIdleTimeout {
		return
	}
	w.cause, w.limit, w.last = errIdleTimeout, w.idle, time.Now()
	w.timer.Reset(w.idle)
}

// touch records progress.
func (w *watchdog) touch() {
	w.mu.Lock()
	if w.cause == errIdleTimeout {
		w.last = time.Now()
	}
	w.mu.Unlock()
}

func (w *watchdog) stop() {
	w.mu.Lock()
	w.closed = true
	w.timer.Stop()
	w.mu.Unlock()
}
