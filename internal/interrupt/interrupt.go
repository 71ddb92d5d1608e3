// Package interrupt is the one policy every frontend (the terminal UI, line
// mode, one-shot runs) applies when the user interrupts tiny-go with Ctrl+C
// or a signal: the first interrupt aborts what is running and tiny-go exits
// once it has ended; while that abort is recent, another interrupt only
// says how to force; after the grace period it stops at once, leaving
// whatever was in flight open for the next resume. With nothing running an
// interrupt exits. (Esc, which aborts without exiting, is the terminal
// UI's own key.)
package interrupt

import (
	"os"
	"os/signal"
	"syscall"
	"time"
)

// Grace is how long an abort under way is given before another interrupt
// stops tiny-go outright: the abort is durable and its reconciliation
// local and bounded, so waiting a moment leaves a session that needs no
// recovery.
const Grace = 3 * time.Second

// HoldHint is what a frontend shows when an interrupt arrives during the
// grace period.
const HoldHint = "Aborting; interrupt again to stop at once."

// Action is what one interrupt asks of the frontend.
type Action int

const (
	// Exit: nothing is running, exit now.
	Exit Action = iota
	// Abort the running operation and exit once it has ended.
	Abort
	// Hold: an abort is under way and recent; show HoldHint.
	Hold
	// Force: stop at once (cancel the operation's context).
	Force
)

func (a Action) String() string {
	return [...]string{"exit", "abort", "hold", "force"}[a]
}

// Policy decides what each interrupt does. The zero value uses Grace and
// the wall clock. It is not safe for concurrent use: each frontend calls
// it from the one goroutine that handles its input.
type Policy struct {
	Grace time.Duration    // 0: Grace
	Now   func() time.Time // nil: time.Now

	abortedAt time.Time
}

// Interrupt decides what an interrupt does; running reports whether an
// operation is in progress.
func (p *Policy) Interrupt(running bool) Action {
	now := time.Now
	if p.Now != nil {
		now = p.Now
	}
	grace := p.Grace
	if grace == 0 {
		grace = Grace
	}
	switch {
	case !running:
		return Exit
	case p.abortedAt.IsZero():
		p.abortedAt = now()
		return Abort
	case now().Sub(p.abortedAt) < grace:
		return Hold
	default:
		return Force
	}
}

// Aborting reports whether an interrupt has asked for an abort.
func (p *Policy) Aborting() bool { return !p.abortedAt.IsZero() }

// Signals are the signals that take the interrupt path.
func Signals() []os.Signal { return []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} }

// Notify delivers the interrupt signals on the returned channel until
// stop is called; meanwhile they no longer terminate the process.
func Notify() (signals <-chan os.Signal, stop func()) {
	ch := make(chan os.Signal, 4)
	signal.Notify(ch, Signals()...)
	return ch, func() { signal.Stop(ch) }
}
