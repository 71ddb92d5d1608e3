package interactive

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/checkpoint"
	"github.com/tiny-agent/tiny-go/internal/cli/cmdutil"
	"github.com/tiny-agent/tiny-go/internal/cli/guard"
	"github.com/tiny-agent/tiny-go/internal/cli/rewindcmd"
	"github.com/tiny-agent/tiny-go/internal/store"
	"github.com/tiny-agent/tiny-go/internal/ui"
)

// currentEngine is the engine of the interactive UI: the runner's agent of
// the moment, which a conversation rewind replaces by the fork's. The UI
// calls it only between operations when it switches.
type currentEngine struct{ a *runner }

func (e currentEngine) Run(ctx context.Context, prompt string) (agent.Result, error) {
	return e.a.Run(ctx, prompt)
}

func (e currentEngine) Compact(ctx context.Context) (agent.Result, agent.CompactStats, error) {
	defer e.a.UserHooks.ManualCompact("")()
	return e.a.Agent.Compact(ctx)
}

func (e currentEngine) Abort(ctx context.Context) (bool, error) { return e.a.Agent.Abort(ctx) }

// interactiveRewinder is /rewind: the same plan, journal and fork as
// `session rewind`; a conversation rewind continues in the fork.
type Rewinder struct {
	a *runner
}

// SessionID is the session the UI is on now (for the resume hint).
func (r *Rewinder) SessionID() string { return r.a.Store.ID() }

func (r *Rewinder) Turns() ([]ui.RewindTurn, error) {
	// The store's state has no timestamps: one streamed pass over the
	// file lists the turns.
	scan, err := rewindcmd.ScanTurnsFile(r.a.Store.Path(), false)
	if err != nil {
		return nil, err
	}
	turns := scan.Turns
	out := make([]ui.RewindTurn, len(turns))
	for i, t := range turns {
		out[i] = ui.RewindTurn{N: t.N, Prompt: t.Prompt, At: time.UnixMilli(t.At)}
	}
	return out, nil
}

func (r *Rewinder) Plan(ctx context.Context, req ui.RewindRequest) (*ui.RewindPlan, error) {
	capBytes, err := rewindcmd.CheckpointCap(r.a.IO.Getenv)
	if err != nil {
		return nil, err
	}
	path := r.a.Store.Path()
	var buf bytes.Buffer
	j, err := rewindcmd.Pending(path)
	if err != nil {
		return nil, err
	}
	if j != nil {
		fmt.Fprintf(&buf, "An interrupted rewind to before turn %d is finished first:\n", j.Turn.N)
	} else {
		j, err = rewindcmd.Plan(ctx, rewindcmd.Request{Path: path, Turn: req.Turn, Force: req.Force, Files: req.Files, Conversation: req.Conversation}, capBytes)
		var ue cmdutil.UsageError
		if errors.As(err, &ue) {
			return nil, errors.New(strings.Replace(ue.Error(), "--turn must", "N must", 1))
		}
		if err != nil {
			return nil, err
		}
	}
	gitDone := ""
	switch {
	case j.Request.Files && req.Details:
		sum := j.Plan.Preview()
		rewindcmd.WriteSummary(&buf, j.Turn, &sum, true)
	case j.Request.Files:
		var read func(checkpoint.File) ([]byte, error)
		if cs, err := checkpoint.Open(rewindcmd.SessionCwd(path), checkpoint.Options{Cap: capBytes}); err == nil {
			defer cs.Close()
			read = cs.Content
		}
		gitDone = rewindcmd.WriteWords(ctx, &buf, r.a.Cwd, j.Turn, j.Plan, read)
	}
	if j.Request.Conversation {
		fmt.Fprintf(&buf, "The conversation goes back to before turn %d in a new session; this one is kept as it is.\n", j.Turn.N)
	}
	state := &plannedRewind{j: j, gitDone: gitDone, details: req.Details}
	return &ui.RewindPlan{Request: req, Preview: strings.Split(strings.TrimRight(buf.String(), "\n"), "\n"), State: state}, nil
}

func (r *Rewinder) Apply(ctx context.Context, plan *ui.RewindPlan) (ui.RewindResult, error) {
	p, ok := plan.State.(*plannedRewind)
	if !ok {
		return ui.RewindResult{}, errors.New("not a rewind plan")
	}
	j := p.j
	capBytes, _ := rewindcmd.CheckpointCap(r.a.IO.Getenv)
	out, err := rewindcmd.Execute(ctx, j, capBytes, false)
	if err != nil {
		return ui.RewindResult{}, err
	}
	var buf bytes.Buffer
	switch {
	case out.Files != nil && p.details:
		rewindcmd.WriteSummary(&buf, out.Turn, out.Files, false)
	case out.Files != nil:
		rewindcmd.WriteDone(&buf, out.Turn, out.Files, p.gitDone)
	}
	res := ui.RewindResult{}
	if out.Fork != nil {
		old := r.a.Store.ID()
		if err := r.a.switchSession(out.Fork.ID); err != nil {
			fmt.Fprintf(&buf, "The conversation was forked into %s, but switching to it failed: %v\nContinue it with: tiny-go --session %s\n", out.Fork.ID, err, out.Fork.ID)
		} else {
			fmt.Fprintf(&buf, "Now in session %s: the conversation before turn %d. The previous session %s is kept (tiny-go --session %s).\n", out.Fork.ID, out.Turn.N, old, old)
			res.SessionID, res.Prompt = out.Fork.ID, out.Turn.Prompt
		}
	}
	res.Lines = strings.Split(strings.TrimRight(buf.String(), "\n"), "\n")
	return res, nil
}

// switchSession moves the runner to session id (a fork just written): its
// store is opened for writing, an agent like the current one is built on
// it, and the previous session is closed.
func (a *runner) switchSession(id string) error {
	st, err := store.Open(a.Cwd, id, store.Options{Fsync: a.Flags.Fsync})
	if err != nil {
		return err
	}
	return a.useStore(st)
}

// useStore moves the runner to the session st is open on; on error st is
// closed and the runner stays where it was.
func (a *runner) useStore(st *store.Store) error {
	prev := a.Store
	a.Store = st
	cfg := a.Agent.Config()
	cfg.Log = st
	if a.Hooks != nil && a.Hooks.WrapLog != nil {
		cfg.Log = a.Hooks.WrapLog(st)
	}
	cfg.BeforeEffect = a.CheckpointHook()
	cfg.ResultNote = a.ResultNote() // the nested instructions the fork's context has
	// The fork's own approval rules (none yet): "always" answers belong
	// to the session they were given in.
	gate, err := a.NewGate()
	if err != nil {
		a.Store = prev
		st.Close()
		return err
	}
	approve := a.UserHooks.Approve(guard.ApproveHook(gate))
	if a.Mode != nil {
		approve = a.Mode.Hook(approve) // the mode Shift+Tab set goes on in the fork
	}
	cfg.Approve = a.Embed.WrapApprove(approve)
	// The reasoning details the fork's replies need sent back live beside
	// the fork (the ones it shares with its source were copied there when
	// it was written); new ones must not go to the source.
	rs, err := a.Wire.OpenReasoning(a.Store.Path(), a.Flags.Fsync)
	if err != nil {
		_ = gate.Close()
		a.Store = prev
		st.Close()
		return err
	}
	cfg.Reasoning = rs
	ag, err := agent.New(cfg)
	if err != nil {
		_ = rs.Close()
		_ = gate.Close()
		a.Store = prev
		st.Close()
		return err
	}
	a.Agent = ag
	if a.Gate != nil {
		_ = a.Gate.Close()
	}
	a.Gate = gate
	if a.Reasoning != nil {
		_ = a.Reasoning.Close()
	}
	a.Reasoning = rs
	_ = prev.Close()
	return a.UserHooks.Attach(a.Store.ID(), a.Store.Path())
}

// plannedRewind is a /rewind plan: the journal, with what the preview
// said of git for the result to say again.
type plannedRewind struct {
	j       *rewindcmd.Journal
	gitDone string
	details bool
}
