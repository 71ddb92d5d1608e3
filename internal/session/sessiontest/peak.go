package sessiontest

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"time"
)

// PeakHeap runs fn and returns about the most heap memory it held at once
// beyond what was in use before: the heap's object bytes, sampled every
// 500µs while fn runs, with the collector at GOGC=10 so that garbage adds
// little to what is live. A reader that holds a whole session file peaks
// at its size or more; one that streams it, at its buffers and results.
func PeakHeap(fn func()) uint64 {
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 {
		metrics.Read(sample)
		return sample[0].Value.Uint64()
	}
	base := read()
	var (
		peak uint64
		wg   sync.WaitGroup
		done = make(chan struct{})
	)
	wg.Go(func() {
		t := time.NewTicker(500 * time.Microsecond)
		defer t.Stop()
		for {
			peak = max(peak, read())
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	})
	fn()
	last := read()
	close(done)
	wg.Wait()
	return max(peak, last, base) - base
}
