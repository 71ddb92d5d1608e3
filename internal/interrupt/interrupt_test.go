package interrupt

import (
	"testing"
	"time"
)

func TestPolicy(t *testing.T) {
	now := time.Unix(1000, 0)
	p := &Policy{Now: func() time.Time { return now }}
	if got := p.Interrupt(false); got != Exit {
		t.Fatalf("idle: %v, want exit", got)
	}
	if p.Aborting() {
		t.Fatal("an idle interrupt started an abort")
	}
	if got := p.Interrupt(true); got != Abort {
		t.Fatalf("first: %v, want abort", got)
	}
	now = now.Add(Grace - time.Millisecond)
	if got := p.Interrupt(true); got != Hold {
		t.Fatalf("within the grace: %v, want hold", got)
	}
	now = now.Add(time.Millisecond)
	if got := p.Interrupt(true); got != Force {
		t.Fatalf("after the grace: %v, want force", got)
	}
	if got := p.Interrupt(false); got != Exit {
		t.Fatalf("once the operation ended: %v, want exit", got)
	}
	q := &Policy{Grace: time.Nanosecond}
	q.Interrupt(true)
	time.Sleep(time.Millisecond)
	if got := q.Interrupt(true); got != Force {
		t.Fatalf("custom grace: %v, want force", got)
	}
}
