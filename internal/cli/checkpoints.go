package cli

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
func (a *runner) checkpointHook() agent.BeforeEffect {
	a.recorder = nil
	return a.lsp.before(a.checkpointOnly())
}

func (a *runner) checkpointOnly() agent.BeforeEffect {
	if strings.EqualFold(strings.TrimSpace(a.io.getenv("TINY_CHECKPOINTS")), "off") {
		return nil
	}
	capBytes, err := rewindcmd.CheckpointCap(a.io.getenv)
	if err != nil {
		fmt.Fprintf(a.io.stderr, "tiny-go: checkpoints are off: %v\n", err)
		return nil
	}
	cs := a.checkpoints
	if cs == nil {
		cs, err = checkpoint.Open(a.cwd, checkpoint.Options{Cap: capBytes, TxLayers: strings.TrimSpace(a.io.getenv("TINY_OVERLAY_LAYERS"))})
		if err != nil {
			fmt.Fprintf(a.io.stderr, "tiny-go: checkpoints are off: %v\n", err)
			return nil
		}
		// Watches and the first full snapshot are set up on the first
		// effect that needs a whole-tree snapshot: a run without one
		// never walks the tree.
		stderr := a.io.stderr
		cs.TrackLazily(func(line string) { fmt.Fprintln(stderr, line) })
		a.checkpoints = cs
	}
	rec := checkpoint.NewRecorder(cs, rewindcmd.SidecarAppender{SessionPath: a.store.Path(), Name: checkpoint.IndexFile})
	a.recorder = rec
	stderr := a.io.stderr
	a.enableTx(rec, func(line string) { fmt.Fprintln(stderr, line) })
	return rec.BeforeEffect
}
