package lifecycle

import (
	"context"
	"fmt"
	"io"
	"sync"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// MarshalLine encodes e as one compact JSON object followed by '\n'.
// Invalid UTF-8 (e.g. in a model's answer) becomes U+FFFD rather than
// losing the event.
func MarshalLine(e Event) ([]byte, error) {
	b, err := json.Marshal(e, jsontext.AllowInvalidUTF8(true))
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// JSONLines writes one event per line to an io.Writer (stdout under
// --json) and nothing else. The first encoding or write error is
// remembered (see Err). A write error also stops further writes, so a
// broken stream never gets more events after a torn line.
type JSONLines struct {
	mu     sync.Mutex
	w      io.Writer
	err    error // first failure
	broken bool  // a write failed: write nothing more
	closed bool
}

// NewJSONLines returns a sink writing to w. Each event is a single Write.
func NewJSONLines(w io.Writer) *JSONLines { return &JSONLines{w: w} }

// Emit writes e as one line unless the sink is closed or has failed.
func (s *JSONLines) Emit(e Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.broken {
		return
	}
	line, err := MarshalLine(e)
	if err != nil {
		// An unencodable event is a programming error; skip it but keep
		// the stream usable.
		s.remember(fmt.Errorf("lifecycle: encode %s: %w", e.Name, err))
		return
	}
	if _, err := s.w.Write(line); err != nil {
		s.broken = true
		s.remember(fmt.Errorf("lifecycle: write %s: %w", e.Name, err))
	}
}

func (s *JSONLines) remember(err error) {
	if s.err == nil {
		s.err = err
	}
}

// Err reports the first encoding or write failure, if any.
func (s *JSONLines) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Close stops the sink. It returns nil even after a write failure: that is
// reported by Err and must not change the caller's result.
func (s *JSONLines) Close(context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	return nil
}
