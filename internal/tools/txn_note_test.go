package tools

import (
	"errors"
	"strings"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/checkpoint"
)

type noteTx struct {
	conflicts []string
	err       error
}

func (n noteTx) Dirs() (string, string, string) { return "", "", "" }
func (n noteTx) Commit() ([]string, error)      { return n.conflicts, n.err }
func (n noteTx) Discard() error                 { return nil }
func (n noteTx) Preview() ([]string, error)     { return nil, nil }

// TestCommitNoteSaysWhatHappened: a commit whose changes all reached the
// tree but could not be recorded (a full disk while writing the states)
// is not reported to the model as changes that could not be applied.
func TestCommitNoteSaysWhatHappened(t *testing.T) {
	full := errors.New("write states.json: no space left on device")
	cases := []struct {
		name      string
		err       error
		want, not string
	}{
		{"applied", nil, "", ""},
		{"not recorded", &checkpoint.NotRecordedError{Err: full}, "were all applied to the working directory, but a rewind may not be able to undo them yet: recording them for a rewind: write states.json: no space left on device", "could not all be applied"},
		{"apply failed", errors.New("applying x: no space left on device"), "could not all be applied to the working directory: applying x", "were all applied"},
	}
	for _, c := range cases {
		got := commitNote(noteTx{err: c.err})
		if c.want == "" && got != "" {
			t.Errorf("%s: %q", c.name, got)
		}
		if !strings.Contains(got, c.want) || (c.not != "" && strings.Contains(got, c.not)) {
			t.Errorf("%s: the model is told %q", c.name, got)
		}
	}
}
