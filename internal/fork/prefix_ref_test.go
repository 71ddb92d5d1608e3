package fork

import (
	"fmt"

	"github.com/tiny-agent/tiny-go/internal/session"
	"github.com/tiny-agent/tiny-go/internal/store"
)

// prefixRef is the fork of a session's bytes as Prefix made it before it
// streamed: split the whole file into lines, cut, and reduce the result.
// The streamed copy must agree with it.
func prefixRef(data []byte, at int64, newID string) ([]byte, error) {
	if !store.ValidID(newID) {
		return nil, fmt.Errorf("%q is not a session id", newID)
	}
	lines, err := committedLines(data)
	if err != nil {
		return nil, err
	}
	last := lines[len(lines)-1]
	if at < 0 {
		at = last.last
	}
	cut := -1
	for _, l := range lines {
		switch {
		case l.last == at:
			cut = l.end
		case at >= l.first && at < l.last && l.first > 0:
			return nil, fmt.Errorf("seq %d is inside a transaction", at)
		}
	}
	if cut < 0 {
		return nil, fmt.Errorf("seq %d is not in the session", at)
	}
	header, err := replaceID(data[:lines[0].end-1], newID)
	if err != nil {
		return nil, err
	}
	out := append(append(header, '\n'), data[lines[0].end:cut]...)
	if _, c := session.Reduce(out); c != nil {
		return nil, c
	}
	return out, nil
}
