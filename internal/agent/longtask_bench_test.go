package agent

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tiny-agent/tiny-go/internal/provider"
	"github.com/tiny-agent/tiny-go/internal/providertest"
	"github.com/tiny-agent/tiny-go/internal/session"
)

// timedProvider measures the time spent inside the provider, so a step's
// wall time minus it is the agent's own overhead (commit, tool, planning).
type timedProvider struct {
	inner provider.Provider
	mu    sync.Mutex
	spent time.Duration
}

func (p *timedProvider) Stream(ctx context.Context, req provider.Request, onDelta func(provider.Delta)) (provider.Response, error) {
	t0 := time.Now()
	resp, err := p.inner.Stream(ctx, req, onDelta)
	p.mu.Lock()
	p.spent += time.Since(t0)
	p.mu.Unlock()
	return resp, err
}

func (p *timedProvider) take() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	d := p.spent
	p.spent = 0
	return d
}

// benchWindow fits about 40 of longTask's steps (2.2 KiB each).
const benchWindow = 24000

// BenchmarkLongTask runs a 300-step task against the loopback server whose
// window fits about 40 steps: with compaction inside the run (on), and
// without (off), where the server rejects the first request past the
// window and the task fails. It reports the compactions, the steps made,
// the largest request body, the total bytes sent, and the agent's own
// overhead per step (wall minus time inside the provider) over the first
// and the last 40 steps, which must be flat.
func BenchmarkLongTask(b *testing.B) {
	for _, on := range []bool{true, false} {
		name := "compaction=off"
		if on {
			name = "compaction=on"
		}
		b.Run(name, func(b *testing.B) {
			var compactions, steps, largest, total, first, last float64
			for b.Loop() {
				b.StopTimer()
				h := newBenchHarness(b, on)
				b.StartTimer()
				r := h.runLongTask(b)
				b.StopTimer()
				compactions += float64(r.compactions)
				steps += float64(r.steps)
				largest = max(largest, float64(r.largest))
				total += float64(r.total)
				first += r.firstOverhead.Seconds() * 1e6
				last += r.lastOverhead.Seconds() * 1e6
				b.StartTimer()
			}
			n := float64(b.N)
			b.ReportMetric(compactions/n, "compactions/op")
			b.ReportMetric(steps/n, "steps/op")
			b.ReportMetric(largest/1024, "max-req-KiB")
			b.ReportMetric(total/n/(1<<20), "sent-MiB/op")
			b.ReportMetric(first/n, "µs/step-first40")
			b.ReportMetric(last/n, "µs/step-last40")
		})
	}
}

type benchHarness struct {
	h     *harness
	timed *timedProvider
}

type longTaskResult struct {
	compactions, steps, largest, total int
	firstOverhead, lastOverhead        time.Duration
}

func newBenchHarness(b *testing.B, compaction bool) *benchHarness {
	bh := &benchHarness{}
	var opts []harnessOption
	if compaction {
		opts = append(opts, withAutoCompact(benchWindow, 0.85))
	}
	bh.timed = &timedProvider{}
	opts = append(opts, func(c *Config) {
		bh.timed.inner = c.Provider
		c.Provider = bh.timed
	})
	bh.h = newHarness(b, nil, opts...)
	lt := longTask(b, bh.h, 300)
	overflow := providertest.Reply{Status: 400, Body: `{"error":{"message":"maximum context length exceeded","code":"context_length_exceeded"}}`}
	bh.h.server.Respond(func(r providertest.Request) providertest.Reply {
		if len(r.Body)/4 > benchWindow {
			return overflow
		}
		return lt.Reply(r)
	})
	return bh
}

// runLongTask runs the task and measures each step: the wall time between
// two model starts of run steps, minus the time spent in the provider.
func (bh *benchHarness) runLongTask(b *testing.B) longTaskResult {
	h := bh.h
	var overheads []time.Duration
	var last time.Time
	h.agent.sink = func(ev Event) {
		if ms, ok := ev.(ModelStarted); ok && ms.Model.Kind == session.OperationRun {
			now := time.Now()
			if !last.IsZero() {
				overheads = append(overheads, now.Sub(last)-bh.timed.take())
			}
			last = now
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	res, err := h.agent.Run(ctx, "do the long task")
	if err != nil {
		b.Fatal(err)
	}
	var r longTaskResult
	for _, q := range h.server.Requests() {
		r.total += len(q.Body)
		r.largest = max(r.largest, len(q.Body))
	}
	labels := h.labels()
	r.compactions = strings.Count(labels, "compactionStarted")
	r.steps = strings.Count(labels, "tool:success")
	if (res.Answer == "The long task is done.") != (r.compactions > 0) {
		b.Fatalf("result %+v after %d steps, %d compactions", res, r.steps, r.compactions)
	}
	// Medians, so the few intervals that hold a summary request do not
	// count as step overhead.
	k := min(40, len(overheads))
	r.firstOverhead, r.lastOverhead = median(overheads[:k]), median(overheads[len(overheads)-k:])
	return r
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
