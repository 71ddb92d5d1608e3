package lifecycle

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"
)

func TestJSONLinesOneEventPerLine(t *testing.T) {
	var buf bytes.Buffer
	s := NewJSONLines(&buf)
	evs := []Event{StartupStarted("m", nil, nil), SessionAttached("s1", true), StartupCompleted(time.Millisecond, Succeeded, "")}
	for _, e := range evs {
		s.Emit(e)
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	s.Emit(OperationStarted(testOp)) // after Close: dropped
	lines := bytes.Split(bytes.TrimSuffix(buf.Bytes(), []byte("\n")), []byte("\n"))
	if len(lines) != len(evs) {
		t.Fatalf("got %d lines, want %d:\n%s", len(lines), len(evs), buf.Bytes())
	}
	for i, l := range lines {
		if !jsontext.Value(l).IsValid() {
			t.Errorf("line %d is not one JSON value: %s", i, l)
		}
		_, vals := decodeMembers(t, l)
		if got, want := string(vals["type"]), `"`+string(evs[i].Name)+`"`; got != want {
			t.Errorf("line %d type %s, want %s", i, got, want)
		}
	}
	if s.Err() != nil {
		t.Errorf("Err = %v", s.Err())
	}
}

// failingWriter fails every write after the first n bytes, tearing the
// write that crosses the limit.
type failingWriter struct {
	n     int
	buf   bytes.Buffer
	calls int
}

func (w *failingWriter) Write(p []byte) (int, error) {
	w.calls++
	room := w.n - w.buf.Len()
	if room >= len(p) {
		return w.buf.Write(p)
	}
	w.buf.Write(p[:max(0, room)])
	return max(0, room), errors.New("broken pipe")
}

func TestJSONLinesFailingWriter(t *testing.T) {
	w := &failingWriter{n: 10}
	s := NewJSONLines(w)
	s.Emit(StartupStarted("m", nil, nil)) // torn
	s.Emit(SessionAttached("s1", false))  // must not be written after a torn line
	if w.calls != 1 {
		t.Errorf("writer called %d times after failure, want 1", w.calls)
	}
	if err := s.Err(); err == nil {
		t.Error("Err = nil after a failed write")
	}
	if err := s.Close(context.Background()); err != nil {
		t.Errorf("Close = %v; a failing sink must not change the caller's result", err)
	}
}

func TestJSONLinesClosedFile(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "events"))
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	s := NewJSONLines(f)
	s.Emit(StartupStarted("m", nil, nil))
	if !errors.Is(s.Err(), os.ErrClosed) {
		t.Errorf("Err = %v, want os.ErrClosed", s.Err())
	}
}

func TestJSONLinesUnencodableEventKeepsStream(t *testing.T) {
	var buf bytes.Buffer
	s := NewJSONLines(&buf)
	s.Emit(Event{Name: "bogus"})
	s.Emit(MCPStarted("fs"))
	if s.Err() == nil {
		t.Error("unknown event not reported")
	}
	if bytes.Count(buf.Bytes(), []byte("\n")) != 1 {
		t.Errorf("output = %q, want only the mcp.started line", buf.Bytes())
	}
}

func TestJSONLinesConcurrentLinesStayWhole(t *testing.T) {
	var buf bytes.Buffer
	s := NewJSONLines(&buf)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 50 {
				s.Emit(MCPStarted(fmt.Sprintf("server-%d-%d", g, i)))
			}
		})
	}
	wg.Wait()
	lines := bytes.Split(bytes.TrimSuffix(buf.Bytes(), []byte("\n")), []byte("\n"))
	if len(lines) != 400 {
		t.Fatalf("%d lines", len(lines))
	}
	for _, l := range lines {
		if !jsontext.Value(l).IsValid() {
			t.Fatalf("interleaved line %q", l)
		}
	}
}

func TestMultiAndNop(t *testing.T) {
	var a, b bytes.Buffer
	m := Multi(NewJSONLines(&a), Nop{}, NewJSONLines(&b))
	m.Emit(MCPStarted("fs"))
	if a.String() != b.String() || a.Len() == 0 {
		t.Errorf("fan-out differs: %q vs %q", a.String(), b.String())
	}
	boom := errors.New("boom")
	m = Multi(closeErr{boom}, closeErr{nil}, closeErr{boom})
	if err := m.Close(context.Background()); !errors.Is(err, boom) {
		t.Errorf("Close = %v", err)
	}
}

type closeErr struct{ err error }

func (closeErr) Emit(Event)                    {}
func (c closeErr) Close(context.Context) error { return c.err }
