package store

import (
	"context"
	"fmt"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tiny-agent/tiny-go/internal/session"
)

// BenchmarkCommit measures one Commit on sessions that already hold 1k,
// 10k and 100k facts. Appending never re-reads or re-reduces the file, so
// the cost must not grow with the session. Each iteration is one commit of
// a realistic run cycle (accept, model request, answer: 2, 1 and 3 facts),
// so an op averages 2 facts.
//
// Besides wall time it reports cpu-ns/op, the process's CPU time (user +
// system, GC included) per commit: on a shared machine wall time measures
// the neighbours too, CPU time much less so.
func BenchmarkCommit(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		b.Run(fmt.Sprintf("facts=%dk", n/1000), func(b *testing.B) {
			s := createStore(b, b.TempDir(), Options{})
			for s.State().Facts < int64(n) {
				commitRun(b, s, "warm-up prompt")
			}
			ctx := context.Background()
			var txs [][]session.Fact
			b.ReportAllocs()
			i := 0
			cpu0 := processCPU(b)
			for b.Loop() {
				if i%3 == 0 {
					b.StopTimer()
					txs = newTestRun(b).transactions("benchmark prompt", "benchmark answer")
					b.StartTimer()
				}
				if _, err := s.Commit(ctx, txs[i%3]); err != nil {
					b.Fatal(err)
				}
				i++
			}
			b.ReportMetric(float64(processCPU(b)-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}

// processCPU is the CPU time the process has used so far.
func processCPU(b *testing.B) time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
