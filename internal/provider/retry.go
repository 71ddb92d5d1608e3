package provider

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync/atomic"
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
	// Endpoint and EndpointSource (the setting that chose it: a flag, a
	// variable, a config file, "the default") name where a refused first
	// request went.
	Endpoint, EndpointSource string
}

// firstRefusedDelay is the one quick wait before a refused first request is
// sent again: a server that is starting may take a moment, one that is not
// running will not come up while the user waits.
const firstRefusedDelay = 500 * time.Millisecond

// retrying is a Provider that re-sends a request which brought back no
// reply (Error.Retryable), inside one logical request.
type retrying struct {
	inner Provider
	cfg   RetryConfig
	// answered is set once the endpoint answered anything (a reply or an
	// HTTP status): from then on a refused connection is an outage worth
	// the full retries, not a server that was never started.
	answered atomic.Bool
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
		var pe *Error
		isProvider := errors.As(err, &pe)
		if err == nil || streamed || isProvider && pe.Status != 0 {
			r.answered.Store(true)
		}
		if err == nil {
			return resp, nil
		}
		if !isProvider || !pe.Retryable || streamed || ctx.Err() != nil {
			return Response{}, err
		}
		neverAnswered := !r.answered.Load() && refused(pe)
		if neverAnswered && send >= 2 {
			return Response{}, r.notRunning(pe)
		}
		if send >= r.cfg.MaxSends {
			return Response{}, giveUp(pe, fmt.Sprintf("gave up after %d sends", send))
		}
		delay := r.delay(send, pe)
		if neverAnswered {
			delay = firstRefusedDelay
		}
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

// refused reports a connection the endpoint's host turned away.
func refused(e *Error) bool {
	return e.Kind == KindConnectionFailed && strings.Contains(e.Message, "connection refused")
}

// notRunning is the final error of a first request whose connection was
// refused twice: nothing listens at the endpoint, so say where tiny-go
// looked and which setting sent it there.
func (r *retrying) notRunning(e *Error) *Error {
	where := "the endpoint"
	if r.cfg.Endpoint != "" {
		where = r.cfg.Endpoint
	}
	if r.cfg.EndpointSource != "" {
		where += " (from " + r.cfg.EndpointSource + ")"
	}
	return giveUp(e, "nothing answered at "+where+": "+notRunningHint)
}

const notRunningHint = "is the server running?"

// IsConfigurationError reports a failure that only a change of settings
// fixes, not a retry: the key was refused (401, 403), the endpoint or
// model does not exist (404), or nothing listens at the endpoint.
func IsConfigurationError(err error) bool {
	var e *Error
	if !errors.As(err, &e) {
		return false
	}
	switch e.Status {
	case http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound:
		return true
	}
	return e.Kind == KindConnectionFailed && strings.HasSuffix(e.Message, notRunningHint+")")
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
