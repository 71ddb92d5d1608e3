package cli

import (
	"bytes"

	"github.com/tiny-agent/tiny-go/internal/session"
)

// transaction is one committed line after the header.
type transaction struct {
	line  int
	facts []session.Fact
}

// committedTransactions decodes the transactions of data that come before
// line stop (0: all), ignoring the torn tail. It stops early at a line that
// does not decode; callers know from Reduce where and why.
func committedTransactions(data []byte, stop int) []transaction {
	if i := bytes.LastIndexByte(data, '\n'); i >= 0 {
		data = data[:i+1]
	} else {
		return nil
	}
	var out []transaction
	for n := 1; len(data) > 0; n++ {
		i := bytes.IndexByte(data, '\n')
		line := data[:i]
		data = data[i+1:]
		if n == 1 {
			continue // the header
		}
		if stop > 0 && n >= stop {
			break
		}
		facts, c := session.DecodeTransaction(line)
		if c != nil {
			break
		}
		out = append(out, transaction{line: n, facts: facts})
	}
	return out
}

// operationCounts tallies operations by their records.
type operationCounts struct {
	runs, compactions          int
	completed, aborted, failed int
	aborts                     int // abortRequested records
	facts                      int64
}

// add counts the facts of one transaction.
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
