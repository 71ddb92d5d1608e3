package session_test

import (
	"fmt"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tiny-agent/tiny-go/internal/session"
	"github.com/tiny-agent/tiny-go/internal/session/sessiontest"
)

var benchSession = sync.OnceValue(func() []byte {
	return sessiontest.Generate(sessiontest.Options{Facts: 50000, Seed: 7, CompactEvery: 20})
})

// BenchmarkReduce reduces a realistic session of 50,000+ facts.
func BenchmarkReduce(b *testing.B) {
	data := benchSession()
	st, c := session.Reduce(data)
	if c != nil {
		b.Fatal(c)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	cpu := processCPU()
	for b.Loop() {
		if _, c := session.Reduce(data); c != nil {
			b.Fatal(c)
		}
	}
	// The machine is shared: wall-clock MB/s drops when other processes
	// run, so also report throughput per CPU second of this process (GC
	// included).
	cpu = processCPU() - cpu
	b.ReportMetric(float64(len(data))*float64(b.N)/cpu.Seconds()/1e6, "cpu-MB/s")
	b.ReportMetric(float64(st.Facts), "facts")
}

// processCPU is the user+system CPU time of this process so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkApply measures the reducer's side of committing one whole run
// (three transactions, five facts: prompt + runStarted, stepAttempt,
// reply + usage + terminal), each checked and then applied as the store
// does, on sessions of growing length: the cost must stay flat.
func BenchmarkApply(b *testing.B) {
	for _, n := range []int{1000, 10000, 100000} {
		b.Run(fmt.Sprintf("facts=%d", n), func(b *testing.B) {
			bld := sessiontest.GenerateBuilder(sessiontest.Options{Facts: n, Seed: 3, CompactEvery: 20})
			r, c := session.NewReducerFromFile(bld.Bytes())
			if c != nil {
				b.Fatal(c)
			}
			snap := sessiontest.DefaultSnapshot("test/model")
			digest := session.ConfigurationDigest(snap)
			next := uint64(1 << 40)
			id := func() string {
				next++
				return fmt.Sprintf("018f0000-0000-7000-8000-%012x", next)
			}
			b.ReportAllocs()
			cpu := processCPU()
			for b.Loop() {
				st := r.State()
				seq := st.Facts
				fact := func(f session.Fact) session.Fact {
					seq++
					f.Seq, f.Timestamp = seq, 1
					if f.ID == "" {
						f.ID = id()
					}
					return f
				}
				user, op, step, att, reply := id(), id(), id(), id(), id()
				text := "answer"
				for _, tx := range [][]session.Fact{
					{fact(session.Fact{ID: user, Entry: &session.UserEntry{Content: "question"}}),
						fact(session.Fact{Record: &session.RunStarted{OperationID: op, InputEntryID: user}})},
					{fact(session.Fact{Record: &session.StepAttempt{OperationID: op, StepID: step, AttemptID: att,
						StepKind: session.StepAssistant, Attempt: 1, ContextThroughEntryID: user,
						ConfigurationSnapshot: snap, ConfigurationDigest: digest}})},
					{fact(session.Fact{ID: reply, Entry: &session.AssistantEntry{StepID: step, AttemptID: att,
						StopReason: session.StopReasonStop, Content: &text}}),
						fact(session.Fact{Usage: &session.UsageFact{OperationID: op, AttemptID: att, Usage: session.Usage{Input: 1}}}),
						fact(session.Fact{Record: &session.OperationFinished{OperationID: op, OperationKind: session.OperationRun,
							Outcome: session.OutcomeCompleted, Completion: session.CompletionNormal, FinalEntryID: reply}})},
				} {
					if c := r.Check(tx); c != nil {
						b.Fatal(c)
					}
					if c := r.Apply(tx); c != nil {
						b.Fatal(c)
					}
				}
			}
			b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}
