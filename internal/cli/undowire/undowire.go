// Package undowire is what lets a rewind undo the effects of one tiny-go
// process (docs/checkpoints.md): the working directory's checkpoint store,
// the session's recorder, and bash commands run as transactions over an
// overlay. It is built from explicit inputs, never from the runner.
package undowire

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/checkpoint"
	"github.com/tiny-agent/tiny-go/internal/cli/rewindcmd"
	"github.com/tiny-agent/tiny-go/internal/sandbox"
	"github.com/tiny-agent/tiny-go/internal/tools"
)

// Options are what the checkpoints of a run read.
type Options struct {
	// Cwd is the working directory (absolute) the store keeps.
	Cwd string
	// Getenv reads TINY_CHECKPOINTS, TINY_CHECKPOINT_CAP, TINY_OVERLAY,
	// TINY_OVERLAY_LAYERS and TINY_TX.
	Getenv func(string) string
	// Stderr takes the one-line warnings (checkpoints off, a transaction
	// refused).
	Stderr io.Writer
	// Sandbox starts the overlay probe's command.
	Sandbox *sandbox.Sandbox
	// Review, when set and true, makes bash commands run over an overlay
	// even where they are journaled (TINY_TX=journal): a review shows
	// their changes before they land.
	Review func() bool
}

// Undo is the checkpoints of a run. The store is opened (and its change
// tracking set up) with the first hook; a hook per session makes the
// recorder, whose bash calls the bridge runs as transactions.
type Undo struct {
	opts  Options
	store *checkpoint.Store
	txns  txBridge

	mu       sync.Mutex
	recorder *checkpoint.Recorder // nil: checkpoints off
}

// New prepares the checkpoints of a run; nothing is opened yet.
func New(o Options) *Undo {
	return &Undo{opts: o}
}

// Hook returns the agent's BeforeEffect for the session at sessionPath:
// a checkpoint before and after every effect of a tool call, recorded in
// the session's sidecar checkpoints.jsonl. TINY_CHECKPOINTS=off turns it
// off (nil); a store that cannot be opened turns it off with one line on
// stderr (the run goes on). Each call replaces the previous recorder.
func (u *Undo) Hook(sessionPath string) agent.BeforeEffect {
	u.setRecorder(nil)
	getenv := u.opts.Getenv
	if strings.EqualFold(strings.TrimSpace(getenv("TINY_CHECKPOINTS")), "off") {
		return nil
	}
	capBytes, err := rewindcmd.CheckpointCap(getenv)
	if err != nil {
		u.warn(fmt.Sprintf("tiny-go: checkpoints are off: %v", err))
		return nil
	}
	if u.store == nil {
		cs, err := checkpoint.Open(u.opts.Cwd, checkpoint.Options{Cap: capBytes, TxLayers: strings.TrimSpace(getenv("TINY_OVERLAY_LAYERS"))})
		if err != nil {
			u.warn(fmt.Sprintf("tiny-go: checkpoints are off: %v", err))
			return nil
		}
		// Watches and the first full snapshot are set up on the first
		// effect that needs a whole-tree snapshot: a run without one
		// never walks the tree.
		cs.TrackLazily(u.warn)
		u.store = cs
	}
	rec := checkpoint.NewRecorder(u.store, rewindcmd.SidecarAppender{SessionPath: sessionPath, Name: checkpoint.IndexFile})
	u.setRecorder(rec)
	u.enableTx(rec)
	return rec.BeforeEffect
}

func (u *Undo) setRecorder(rec *checkpoint.Recorder) {
	u.mu.Lock()
	u.recorder = rec
	u.mu.Unlock()
}

// warn writes one line to stderr.
func (u *Undo) warn(line string) {
	fmt.Fprintln(u.opts.Stderr, line)
}

// Changed lists the files the effect of tool call id changed, from its
// checkpoints (the language servers' diagnostics ask which files a
// command rewrote).
func (u *Undo) Changed(ctx context.Context, id string) ([]string, error) {
	u.mu.Lock()
	rec := u.recorder
	u.mu.Unlock()
	if rec == nil {
		return nil, errors.New("checkpoints are off")
	}
	return rec.Changed(ctx, id)
}

// Transactions is bash's bridge to the transaction the recorder began for
// its call.
func (u *Undo) Transactions() tools.Transactions {
	return &u.txns
}

// TxUsable reports whether bash calls of the current recorder are
// transactions (the overlay probe runs at the first question).
func (u *Undo) TxUsable() bool {
	return u.txns.usable()
}

// Close closes the checkpoint store, if one was opened.
func (u *Undo) Close() error {
	if u == nil || u.store == nil {
		return nil
	}
	return u.store.Close()
}
