package sessioncmd

import (
	"io"

	"github.com/tiny-agent/tiny-go/internal/session"
)

// Transaction is one committed line after the header.
type Transaction struct {
	Line  int
	Facts []session.Fact
}

// EachTransaction decodes the transactions of a session as it reads rd,
// line by line (the file is never held whole), and calls fn with each
// until fn returns false. It ignores the header and the torn tail and
// stops at the first line that does not decode; callers know from the
// reducer where and why. Memory is the longest line. A Transaction's facts
// slice is valid only during fn (their payloads stay valid).
func EachTransaction(rd io.Reader, fn func(Transaction) bool) error {
	lines := session.NewLineReader(rd, 64<<10)
	var dec session.Decoder
	for n := 1; ; n++ {
		line, ok, err := lines.Next()
		if err != nil || !ok {
			return err
		}
		if n == 1 {
			continue // the header
		}
		facts, c := dec.Decode(line[:len(line)-1])
		if c != nil || !fn(Transaction{Line: n, Facts: facts}) {
			return nil
		}
	}
}

// operationCounts tallies operations by their records.
type operationCounts struct {
	runs, compactions          int
	completed, aborted, failed int
	aborts                     int // abortRequested records
	facts                      int64
}

// add counts the facts of one Transaction.
func (n *operationCounts) add(facts []session.Fact) {
	for _, f := range facts {
		n.facts++
		switch r := f.Record.(type) {
		case *session.RunStarted:
			n.runs++
		case *session.CompactionStarted:
			n.compactions++
		case *session.AbortRequested:
			n.aborts++
		case *session.OperationFinished:
			switch r.Outcome {
			case session.OutcomeCompleted:
				n.completed++
			case session.OutcomeAborted:
				n.aborted++
			case session.OutcomeFailed:
				n.failed++
			}
		}
	}
}
