package assemble

import (
	"fmt"
	"strings"

	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/checkpoint"
	"github.com/tiny-agent/tiny-go/internal/cli/rewindcmd"
)

// checkpointHook returns the agent's BeforeEffect: a checkpoint before and
// after every effect of a tool call, recorded in the session's sidecar
// checkpoints.jsonl. TINY_CHECKPOINTS=off turns it off; a store that
// cannot be opened turns it off with one line on stderr (the run goes on).
func (a *Runner) CheckpointHook() agent.BeforeEffect {
	a.recorder = nil
	return a.LSP.before(a.checkpointOnly())
}

func (a *Runner) checkpointOnly() agent.BeforeEffect {
	if strings.EqualFold(strings.TrimSpace(a.IO.Getenv("TINY_CHECKPOINTS")), "off") {
		return nil
	}
	capBytes, err := rewindcmd.CheckpointCap(a.IO.Getenv)
	if err != nil {
		fmt.Fprintf(a.IO.Stderr, "tiny-go: checkpoints are off: %v\n", err)
		return nil
	}
	cs := a.checkpoints
	if cs == nil {
		cs, err = checkpoint.Open(a.Cwd, checkpoint.Options{Cap: capBytes, TxLayers: strings.TrimSpace(a.IO.Getenv("TINY_OVERLAY_LAYERS"))})
		if err != nil {
			fmt.Fprintf(a.IO.Stderr, "tiny-go: checkpoints are off: %v\n", err)
			return nil
		}
		// Watches and the first full snapshot are set up on the first
		// effect that needs a whole-tree snapshot: a run without one
		// never walks the tree.
		stderr := a.IO.Stderr
		cs.TrackLazily(func(line string) { fmt.Fprintln(stderr, line) })
		a.checkpoints = cs
	}
	rec := checkpoint.NewRecorder(cs, rewindcmd.SidecarAppender{SessionPath: a.Store.Path(), Name: checkpoint.IndexFile})
	a.recorder = rec
	stderr := a.IO.Stderr
	a.enableTx(rec, func(line string) { fmt.Fprintln(stderr, line) })
	return rec.BeforeEffect
}
