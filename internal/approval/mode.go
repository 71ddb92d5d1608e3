package approval

import (
	"context"
	"sync/atomic"

	"github.com/tiny-agent/tiny-go/internal/agent"
)

// Switch is the mode in effect, which the user may change while a session
// runs (Shift+Tab in the terminal, session/set_mode in an editor). Safe for
// concurrent use; a nil *Switch is Auto.
type Switch struct {
	m atomic.Value // Mode
	// asking is the mode of the cycle that asks: edits or review when the
	// session started in it, else ask.
	asking Mode
}

// NewSwitch starts in m.
func NewSwitch(m Mode) *Switch {
	s := &Switch{asking: Ask}
	if m == Edits || m == Review {
		s.asking = m
	}
	s.m.Store(m)
	return s
}

// Mode is the mode now.
func (s *Switch) Mode() Mode {
	if s == nil {
		return Auto
	}
	return s.m.Load().(Mode)
}

// Set changes the mode.
func (s *Switch) Set(m Mode) { s.m.Store(m) }

// Next moves to the next mode, ask -> auto -> plan -> ask, and returns it
// (edits or review stand for ask when the session started in them).
func (s *Switch) Next() Mode {
	next := Auto
	switch s.Mode() {
	case Auto:
		next = Plan
	case Plan:
		next = s.asking
	}
	s.Set(next)
	return next
}

// Planning reports whether plan mode is on.
func (s *Switch) Planning() bool { return s.Mode() == Plan }

// Hook is the agent's Approve hook under s: ask, edits and review ask
// (gate, nil when there is none; the gate lets edits mode's edits and
// review mode's reviewed commands through), auto and plan allow (in plan
// mode the tools themselves refuse what would change something; see
// planmode) unless a hook or a permission rule asked for approval.
func (s *Switch) Hook(gate agent.ApproveFunc) agent.ApproveFunc {
	if gate == nil {
		return nil
	}
	return func(ctx context.Context, req agent.ApprovalRequest) (agent.Approval, error) {
		// A hook or permission rule that asks is asked in every mode
		// where someone can answer.
		if m := s.Mode(); (m != Ask && m != Edits && m != Review && !req.Asked) || changesNothing(req) {
			return agent.Approval{Allow: true}, nil
		}
		return gate(ctx, req)
	}
}

// changesNothing: the built-in todo_write (the list is the call's own
// arguments) and task (each of the subagent's calls is asked about on its
// own) are not asked about.
func changesNothing(req agent.ApprovalRequest) bool {
	return req.Builtin && (req.Tool == "todo_write" || req.Tool == "task")
}
