package provider

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
)

// Retry limits of runtime.md §1, per attempt.
const (
	DefaultMaxSends  = 6
	DefaultRetryWait = 2 * time.Minute
	retryBaseDelay   = time.Second
	retryMaxDelay    = 30 * time.Second
)

// RetryWait describes one wait before a request is sent again.
type RetryWait struct {
	Send  int           // the send that failed, from 1
	Delay time.Duration // how long until the next send
	Err   *Error        // why
}

// String is the line shown while waiting: "retrying in 4s: HTTP 429".
func (w RetryWait) String() string {
	return fmt.Sprintf("retrying in %s: %s", waitText(w.Delay), w.Err.short())
}

// Cause names why the request is sent again: "HTTP 429".
func (w RetryWait) Cause() string { return w.Err.short() }

func waitText(d time.Duration) string {
	return fmt.Sprintf("%ds", int64((d+time.Second-1)/time.Second))
}

// short names the failure in a few words.
func (e *Error) short() string {
	switch {
	case e.Status != 0:
		return fmt.Sprintf("HTTP %d", e.Status)
	case e.Kind == KindTimeout:
		return "connection timed out"
	default:
		return "connection failed"
	}
}

// RetryConfig bounds the re-sending of requests that brought back no
// reply. Zero fields select the defaults.
type RetryConfig struct {
	MaxSends int           // sends per attempt, the first included
	MaxWait  time.Duration // total waiting per attempt
	// Sleep waits d or until ctx ends; tests replace it.
	Sleep func(ctx context.Context, d time.Duration) error
	// Jitter returns a factor in [0, 1); tests replace it.
	Jitter func() float64
}

// retrying is a Provider that re-sends a request which brought back no
// reply (Error.Retryable), inside one logical request.
type retrying struct {
	inner Provider
	cfg   RetryConfig
}

// Retry wraps p so that a request the server never answered is sent again
// with capped exponential backoff and jitter, honouring Retry-After, at
// most MaxSends times and MaxWait of waiting. Each wait is announced to
// onDelta as a Delta with Retry set, and ends at once when ctx does. A
// reply that had begun streaming is never sent again.
func Retry(p Provider, cfg RetryConfig) Provider {
	if cfg.MaxSends <= 0 {
		cfg.MaxSends = DefaultMaxSends
	}
	if cfg.MaxWait <= 0 {
		cfg.MaxWait = DefaultRetryWait
	}
	if cfg.Sleep == nil {
		cfg.Sleep = sleep
	}
	if cfg.Jitter == nil {
		cfg.Jitter = rand.Float64
	}
	return &retrying{inner: p, cfg: cfg}
}

func (r *retrying) Stream(ctx context.Context, req Request, onDelta func(Delta)) (Response, error) {
	var waited time.Duration
	for send := 1; ; send++ {
		streamed := false
		resp, err := r.inner.Stream(ctx, req, func(d Delta) {
			streamed = true
			if onDelta != nil {
				onDelta(d)
			}
		})
		if err == nil {
			return resp, nil
		}
		var pe *Error
		if !errors.As(err, &pe) || !pe.Retryable || streamed || ctx.Err() != nil {
			return Response{}, err
		}
		if send >= r.cfg.MaxSends {
			return Response{}, giveUp(pe, fmt.Sprintf("gave up after %d sends", send))
		}
		delay := r.delay(send, pe)
		if waited+delay > r.cfg.MaxWait {
			if pe.RetryAfter > 0 {
				return Response{}, giveUp(pe, "not retried: the server asked to wait "+waitText(pe.RetryAfter))
			}
			delay = r.cfg.MaxWait - waited
			if delay <= 0 {
				return Response{}, giveUp(pe, "gave up after "+waitText(waited)+" of waiting")
			}
		}
		if onDelta != nil {
			onDelta(Delta{Retry: &RetryWait{Send: send, Delay: delay, Err: pe}})
		}
		if err := r.cfg.Sleep(ctx, delay); err != nil {
			return Response{}, fmt.Errorf("provider request: %w", err)
		}
		waited += delay
	}
}

// delay is the wait before send+1: the server's Retry-After when given,
// else capped exponential backoff with jitter (between half and the whole
// step, so concurrent clients spread out and the wait never collapses).
func (r *retrying) delay(send int, e *Error) time.Duration {
	if e.RetryAfter > 0 {
		return e.RetryAfter
	}
	step := min(retryBaseDelay<<(send-1), retryMaxDelay)
	return step/2 + time.Duration(r.cfg.Jitter()*float64(step/2))
}

// giveUp is the final error of a request that was re-sent until the
// limits: the last failure, saying why no further send was made. It is not
// retryable any more, so an outer wrapper does not start over.
func giveUp(e *Error, why string) *Error {
	out := *e
	out.Retryable = false
	out.Message = e.Message + " (" + why + ")"
	return &out
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
