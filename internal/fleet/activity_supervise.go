// Watching a running agent: heartbeats, the cost budget, abort and kill.

package fleet

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/tiny-agent/tiny-go/internal/eval"
	"github.com/tiny-agent/tiny-go/internal/session"
)

// supervisor keeps a running agent durable: every tick it ships the
// session and events, heartbeats, and watches the cost and time budgets;
// it aborts the agent durably (SIGTERM, then SIGKILL after abortGrace)
// when a budget is spent or Temporal cancels the task.
type supervisor struct {
	a                           *Activities
	ctx                         context.Context
	t                           Task
	sy                          *syncer
	cmd                         *exec.Cmd
	events                      *eventLog
	run                         *agentRun
	earlier                     float64
	costLog, costKey, eventsKey string
	syncErr                     error
	aborting                    <-chan time.Time
}

// watch waits for the agent to end and returns cmd.Wait's error. The
// agent's process group is gone and everything is shipped when it returns.
func (s *supervisor) watch() error {
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	every := s.a.SyncEvery
	if every <= 0 {
		every = 100 * time.Millisecond
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	ctxDone := s.ctx.Done()
	outOfTime := time.After(firstDuration(s.t.Timeout, eval.DefaultAgentTimeout))
	var waitErr error
loop:
	for {
		select {
		case waitErr = <-done:
			break loop
		case <-outOfTime:
			s.run.timedOut = true
			s.abort()
		case <-tick.C:
			s.tick()
		case <-ctxDone:
			ctxDone = nil
			// Cancelled from Temporal: Esc, a durable abort. Timed out,
			// lost or shut down: this attempt ends as if its machine
			// died, and the next one recovers the step in flight.
			var cancelled *temporal.CanceledError
			if errors.As(context.Cause(s.ctx), &cancelled) {
				s.abort()
			} else {
				s.kill()
			}
		case <-s.aborting:
			s.kill()
		}
	}
	s.kill()
	c := context.WithoutCancel(s.ctx)
	s.sync(c)
	s.run.cost = readCost(s.costLog)
	_ = s.a.Blobs.Put(c, s.costKey, []byte(strconv.FormatFloat(s.run.cost, 'g', -1, 64)))
	s.run.cost += s.earlier
	return waitErr
}

func (s *supervisor) tick() {
	s.sync(s.ctx)
	s.run.cost = readCost(s.costLog)
	if c := s.earlier + s.run.cost; c > s.run.reported {
		s.run.reported = c
		_ = s.a.Blobs.Put(s.ctx, s.costKey, []byte(strconv.FormatFloat(s.run.cost, 'g', -1, 64)))
	}
	if why := overBudget(s.t, s.sy.state(), s.earlier+s.run.cost); why != "" && s.run.overBudget == "" {
		s.run.overBudget = why
		s.abort()
	}
}

// sync ships the session's new facts and the events, then heartbeats.
func (s *supervisor) sync(c context.Context) {
	t0 := time.Now()
	if err := s.sy.step(c); err != nil && s.syncErr == nil {
		s.syncErr = err
	}
	if n := s.events.len(); n > s.events.sent {
		_ = s.a.Blobs.Put(c, s.eventsKey, s.events.bytes())
		s.events.sent = n
	}
	s.run.uploadMs += time.Since(t0).Milliseconds()
}

func (s *supervisor) abort() {
	if s.aborting == nil {
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		s.aborting = time.After(abortGrace)
	}
}

func (s *supervisor) kill() { _ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL) }

// overBudget says why the task exceeds its budget ("" if not): tokens
// from the session (every attempt's), cost in US dollars over attempts.
func overBudget(t Task, st *session.State, cost float64) string {
	if t.MaxCostUSD > 0 && cost > t.MaxCostUSD {
		return fmt.Sprintf("budget exceeded: $%.4f spent, the limit is $%.4f", cost, t.MaxCostUSD)
	}
	if st == nil || t.MaxTokens <= 0 {
		return ""
	}
	u := st.Usage
	if used := u.Input + u.Output + u.CacheRead + u.CacheWrite; used > t.MaxTokens {
		return fmt.Sprintf("budget exceeded: %d tokens used, the limit is %d", used, t.MaxTokens)
	}
	return ""
}

// readCost sums the "cost X" lines of the agent's eval log.
func readCost(path string) float64 {
	data, _ := os.ReadFile(path)
	var sum float64
	for _, line := range strings.Split(string(data), "\n") {
		if c, ok := strings.CutPrefix(line, "cost "); ok {
			if v, err := strconv.ParseFloat(c, 64); err == nil {
				sum += v
			}
		}
	}
	return sum
}

// earlierCost is what the attempts before this one spent.
func (a *Activities) earlierCost(ctx context.Context, prefix string, attempt int32) (float64, error) {
	var sum float64
	for i := int32(1); i < attempt; i++ {
		b, ok, err := a.Blobs.Get(ctx, fmt.Sprintf("%s/cost-%d", prefix, i))
		if err != nil {
			return 0, err
		}
		if ok {
			v, _ := strconv.ParseFloat(string(b), 64)
			sum += v
		}
	}
	return sum, nil
}
