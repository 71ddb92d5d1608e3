package lifecycle

import (
	"context"
	"errors"
)

// Sink receives lifecycle events. Emit never blocks on I/O failures and
// never reports them: a failing sink must not change an operation's result.
// Implementations are safe for concurrent use.
type Sink interface {
	Emit(Event)
	// Close flushes and releases the sink; events emitted afterwards are
	// dropped. Its error is diagnostic only (log it, never fail a run on
	// it). Close honours ctx's deadline.
	Close(ctx context.Context) error
}

// Nop discards every event.
type Nop struct{}

func (Nop) Emit(Event)                  {}
func (Nop) Close(context.Context) error { return nil }

// Multi fans every event out to sinks, in order.
func Multi(sinks ...Sink) Sink {
	return multi(append([]Sink(nil), sinks...))
}

type multi []Sink

func (m multi) Emit(e Event) {
	for _, s := range m {
		s.Emit(e)
	}
}

// Close closes every sink, even after one fails, and joins their errors.
func (m multi) Close(ctx context.Context) error {
	var errs []error
	for _, s := range m {
		errs = append(errs, s.Close(ctx))
	}
	return errors.Join(errs...)
}
