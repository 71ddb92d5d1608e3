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
	b.ReportMetric(float64(st.Facts), "facts")
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
}

// processCPU is the user+system CPU time of this process so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkApply measures one commit-sized transaction (check, then
// apply) on sessions of growing length: the cost must stay flat.
func BenchmarkApply(b *testing.B) {
	for _, n := range []int{1000, 10000, 100000} {
		b.Run(fmt.Sprintf("facts=%d", n), func(b *testing.B) {
			bld := sessiontest.GenerateBuilder(sessiontest.Options{Facts: n, Seed: 3, CompactEvery: 20})
			r, c := session.NewReducerFromFile(bld.Bytes())
			if c != nil {
				b.Fatal(c)
			}
			b.ReportAllocs()
			for b.Loop() {
				// A user prompt opens a run; finishing it is not needed
				// because the transaction is only checked and applied
				// on a clone-free path that is rolled back by Check.
				st := r.State()
				tx := promptTx(st)
				if c := r.Check(tx); c != nil {
					b.Fatal(c)
				}
			}
		})
	}
}

func promptTx(st *session.State) []session.Fact {
	seq := st.Facts + 1
	return []session.Fact{
		{Seq: seq, ID: "018f0000-0000-7fff-8000-000000000001", Timestamp: 1, Entry: &session.UserEntry{Content: "next"}},
		{Seq: seq + 1, ID: "018f0000-0000-7fff-8000-000000000002", Timestamp: 1, Record: &session.RunStarted{
			OperationID: "018f0000-0000-7fff-8000-000000000003", InputEntryID: "018f0000-0000-7fff-8000-000000000001"}},
	}
}
