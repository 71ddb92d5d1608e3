package assemble

import (
	"context"
	"errors"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"syscall"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tiny-agent/tiny-go/internal/approval"
	"github.com/tiny-agent/tiny-go/internal/checkpoint"
	"github.com/tiny-agent/tiny-go/internal/procs"
	"github.com/tiny-agent/tiny-go/internal/sandbox"
	"github.com/tiny-agent/tiny-go/internal/tools"
)

// txBridge hands bash the transaction that the checkpoint recorder began
// for its call (docs/checkpoints.md, "Commands as transactions").
type txBridge struct {
	mu  sync.Mutex
	rec *checkpoint.Recorder
}

func (b *txBridge) set(rec *checkpoint.Recorder) {
	b.mu.Lock()
	b.rec = rec
	b.mu.Unlock()
}

func (b *txBridge) For(ctx context.Context) tools.Transaction {
	b.mu.Lock()
	rec := b.rec
	b.mu.Unlock()
	if rec == nil {
		return nil
	}
	if txn := rec.Txn(tools.StartedID(ctx)); txn != nil {
		return txn
	}
	return nil
}

func (b *txBridge) Blocked(ctx context.Context) error {
	b.mu.Lock()
	rec := b.rec
	b.mu.Unlock()
	if rec == nil {
		return nil
	}
	return rec.Blocked(tools.StartedID(ctx))
}

// transactions is the runner's bridge, made on first use.
func (a *Runner) transactions() *txBridge {
	if a.txns == nil {
		a.txns = &txBridge{}
	}
	return a.txns
}

// enableTx makes rec run bash calls as transactions; TINY_OVERLAY=off
// refuses them (and the line says so, like any other refusal).
func (a *Runner) enableTx(rec *checkpoint.Recorder, warn func(string)) {
	if runtime.GOOS != "linux" {
		return // no overlay there: sandbox.PlatformLine said so at start
	}
	// What a killed process left half-applied is finished at the next
	// start (one directory read when nothing is pending).
	if _, err := rec.Store().RecoverTx(); err != nil {
		// One line per transaction refused (errors.Join).
		for l := range strings.SplitSeq(err.Error(), "\n") {
			warn("tiny-go: " + l)
		}
	}
	probe := overlayProbe(a.Guard.Sandbox(), rec.Store())
	if strings.EqualFold(strings.TrimSpace(a.IO.Getenv("TINY_OVERLAY")), "off") {
		probe = func() error { return errors.New("TINY_OVERLAY=off") }
	}
	rec.EnableTx(probe, warn)
	a.transactions().set(rec)
}

// overlayProbe runs `sh -c :` over an overlay once: namespaces may be
// there while the kernel or the file system refuses the overlay.
func overlayProbe(sb *sandbox.Sandbox, cs *checkpoint.Store) func() error {
	return func() error {
		if err := sb.OverlayRefusal(); err != nil {
			return err
		}
		txn, err := cs.BeginTx()
		if err != nil {
			return err
		}
		defer txn.Discard()
		lower, upper, work := txn.Dirs()
		cmd := exec.Command("/bin/sh", "-c", ":")
		var stderr strings.Builder
		cmd.Stderr = &stderr
		cmd.SysProcAttr = procs.DiesWithUs(&syscall.SysProcAttr{Setpgid: true})
		if err := sb.StartOverlay(cmd, sandbox.Overlay{Lower: lower, Upper: upper, Work: work}); err != nil {
			return err
		}
		if err := cmd.Wait(); err != nil {
			if line := strings.TrimSpace(stderr.String()); line != "" {
				return errors.New(strings.TrimPrefix(line, "tiny-go: namespace init: "))
			}
			return err
		}
		return nil
	}
}

// userShellKey prefixes the index key of a !command's checkpoint (it has
// no toolStarted fact).
const userShellKey = "shell:"

// runUserShell runs a !command like a bash call of the model: with its
// checkpoint, so as a transaction where commands are (a rewind puts back
// what it changed, and names it), keyed "shell:<id>" in the index.
func (a *Runner) RunUserShell(ctx context.Context, id string, args jsontext.Value) tools.Result {
	key := userShellKey + id
	after := func() {}
	if a.Agent != nil {
		if before := a.Agent.Config().BeforeEffect; before != nil {
			if f := before(ctx, key, "bash", args); f != nil {
				after = f
			}
		}
	}
	res := a.shellTool.Run(tools.WithStartedID(ctx, key), args)
	after()
	return res
}

// usable reports whether bash calls of the current recorder are
// transactions (the overlay probe runs at the first question).
func (b *txBridge) usable() bool {
	b.mu.Lock()
	rec := b.rec
	b.mu.Unlock()
	return rec != nil && rec.TxUsable()
}

// reviewer is bash's Reviewer in --approval review: the session's gate
// asks.
func (a *Runner) reviewer() tools.Reviewer {
	if a.Guard.Approval() != approval.Review && a.Embed == nil {
		return nil
	}
	return func(ctx context.Context, command string, changes []string) (bool, error) {
		// An editor's session reviews while its mode is review.
		if a.Gate == nil || (a.Embed != nil && a.Mode.Mode() != approval.Review) {
			return true, nil
		}
		return a.Gate.Review(ctx, command, changes)
	}
}
