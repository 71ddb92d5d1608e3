package store

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/tiny-agent/tiny-go/internal/session"
)

// gateSink blocks the next write until the gate is opened.
type gateSink struct {
	sink
	mu      sync.Mutex
	gate    chan struct{} // nil: pass through
	entered chan struct{}
}

func (g *gateSink) WriteAt(p []byte, off int64) (int, error) {
	g.mu.Lock()
	gate, entered := g.gate, g.entered
	g.gate = nil
	g.mu.Unlock()
	if gate != nil {
		close(entered)
		<-gate
	}
	return g.sink.WriteAt(p, off)
}

// TestCommitFIFO holds one commit inside its write, queues N more one at a
// time (each is waiting before the next starts), and checks that the file
// holds them in arrival order.
func TestCommitFIFO(t *testing.T) {
	const n = 24
	g := &gateSink{}
	s := createStore(t, t.TempDir(), Options{wrapSink: func(f sink) sink { g.sink = f; return g }})

	// Usage facts need an owner: one finished run provides it.
	r := commitRun(t, s, "owner")
	usage := func(i int) []session.Fact {
		return []session.Fact{{Usage: &session.UsageFact{OperationID: r.op, AttemptID: r.attempt, Usage: session.Usage{Input: int64(i)}}}}
	}

	gate := make(chan struct{})
	g.mu.Lock()
	g.gate, g.entered = gate, make(chan struct{})
	entered := g.entered
	g.mu.Unlock()

	var wg sync.WaitGroup
	errs := make(chan error, n+1)
	wg.Go(func() {
		if _, err := s.Commit(context.Background(), usage(1000)); err != nil {
			errs <- err
		}
	})
	<-entered
	for i := range n {
		wg.Go(func() {
			if _, err := s.Commit(context.Background(), usage(i)); err != nil {
				errs <- err
			}
		})
		deadline := time.Now().Add(10 * time.Second)
		for s.queue.waiting() != i+1 {
			if time.Now().After(deadline) {
				t.Fatalf("commit %d never queued", i)
			}
			time.Sleep(100 * time.Microsecond)
		}
	}
	close(gate)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}

	txs := decodeLines(t, readFile(t, s.Path()))
	var order []int64
	for _, tx := range txs[len(txs)-n-1:] {
		order = append(order, tx[0].Usage.Usage.Input)
	}
	for i, v := range order {
		want := int64(i - 1)
		if i == 0 {
			want = 1000
		}
		if v != want {
			t.Fatalf("commit order %v, want 1000 then 0..%d", order, n-1)
		}
	}
}

// TestConcurrentCommits hammers one store from many goroutines (run it
// with -race): every commit lands whole, seqs are dense, and memory equals
// the file.
func TestConcurrentCommits(t *testing.T) {
	const goroutines, each = 16, 25
	s := createStore(t, t.TempDir(), Options{})
	r := commitRun(t, s, "owner")
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range each {
				tx := []session.Fact{{Usage: &session.UsageFact{OperationID: r.op, AttemptID: r.attempt, Usage: session.Usage{Output: 1}}}}
				if i%5 == 0 {
					tx = append(tx, tx[0]) // some two-fact transactions
				}
				if _, err := s.Commit(context.Background(), tx); err != nil {
					t.Errorf("goroutine %d commit %d: %v", g, i, err)
					return
				}
				_ = s.State() // readers run alongside writers
			}
		})
	}
	wg.Wait()
	st := s.State()
	wantFacts := int64(6 + goroutines*(each+each/5))
	if st.Facts != wantFacts {
		t.Errorf("facts %d, want %d", st.Facts, wantFacts)
	}
	if want := int64(2 + goroutines*(each+each/5)); st.Usage.Output != want {
		t.Errorf("usage output %d, want %d", st.Usage.Output, want)
	}
	seq := int64(0)
	for _, tx := range decodeLines(t, readFile(t, s.Path())) {
		for _, f := range tx {
			seq++
			if f.Seq != seq {
				t.Fatalf("seq %d at position %d", f.Seq, seq)
			}
		}
	}
	if got, want := printed(t, st), printed(t, reduceFile(t, s.Path())); got != want {
		t.Error("memory state differs from the file's")
	}
}

// decodeLines decodes every transaction line after the header.
func decodeLines(t *testing.T, data []byte) [][]session.Fact {
	t.Helper()
	var out [][]session.Fact
	for i, line := range splitLines(data)[1:] {
		tx, c := session.DecodeTransaction(line)
		if c != nil {
			t.Fatalf("line %d: %v", i+2, c)
		}
		out = append(out, tx)
	}
	return out
}

// splitLines splits committed bytes into lines without their LF.
func splitLines(data []byte) [][]byte {
	var out [][]byte
	for len(data) > 0 {
		i := 0
		for i < len(data) && data[i] != '\n' {
			i++
		}
		out = append(out, data[:i])
		if i == len(data) {
			break
		}
		data = data[i+1:]
	}
	return out
}

func TestFIFOUnit(t *testing.T) {
	var q fifo
	q.acquire(context.Background())
	var mu sync.Mutex
	var got []int
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() {
			q.acquire(context.Background())
			mu.Lock()
			got = append(got, i)
			mu.Unlock()
			q.release()
		})
		for q.waiting() != i+1 {
			time.Sleep(50 * time.Microsecond)
		}
	}
	q.release()
	wg.Wait()
	for i, v := range got {
		if v != i {
			t.Fatalf("grant order %v", got)
		}
	}
	// A cancelled waiter does not hold up the ones behind it.
	q.acquire(context.Background())
	ctx, cancel := context.WithCancel(context.Background())
	res := make(chan error, 1)
	go func() { res <- q.acquire(ctx) }()
	for q.waiting() != 1 {
		time.Sleep(50 * time.Microsecond)
	}
	second := make(chan struct{})
	go func() { q.acquire(context.Background()); close(second) }()
	for q.waiting() != 2 {
		time.Sleep(50 * time.Microsecond)
	}
	cancel()
	if err := <-res; err == nil {
		t.Fatal("cancelled acquire succeeded")
	}
	q.release()
	select {
	case <-second:
	case <-time.After(5 * time.Second):
		t.Fatal("waiter behind a cancelled one never got the lock")
	}
	q.release()
	if q.held {
		t.Error(fmt.Sprint("lock still held: ", q.held))
	}
}
