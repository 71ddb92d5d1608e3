package undowire

import (
	"context"
	"errors"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"syscall"

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

func (b *txBridge) current() *checkpoint.Recorder {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.rec
}

func (b *txBridge) For(ctx context.Context) tools.Transaction {
	rec := b.current()
	if rec == nil {
		return nil
	}
	// A nil *Txn must not become a non-nil interface.
	if txn := rec.Txn(tools.StartedID(ctx)); txn != nil {
		return txn
	}
	return nil
}

func (b *txBridge) Blocked(ctx context.Context) error {
	rec := b.current()
	if rec == nil {
		return nil
	}
	return rec.Blocked(tools.StartedID(ctx))
}

// usable reports whether bash calls of the current recorder are
// transactions.
func (b *txBridge) usable() bool {
	rec := b.current()
	return rec != nil && rec.TxUsable()
}

// enableTx makes rec run bash calls as transactions; TINY_OVERLAY=off
// refuses them (and the line says so, like any other refusal).
func (u *Undo) enableTx(rec *checkpoint.Recorder) {
	if runtime.GOOS != "linux" {
		return // no overlay there: sandbox.PlatformLine said so at start
	}
	// What a killed process left half-applied is finished at the next
	// start (one directory read when nothing is pending).
	if _, err := rec.Store().RecoverTx(); err != nil {
		// One line per transaction refused (errors.Join).
		for l := range strings.SplitSeq(err.Error(), "\n") {
			u.warn("tiny-go: " + l)
		}
	}
	probe := overlayProbe(u.opts.Sandbox, rec.Store())
	switch {
	case strings.EqualFold(strings.TrimSpace(u.opts.Getenv("TINY_OVERLAY")), "off"):
		probe = func() error { return errors.New("TINY_OVERLAY=off") }
	case u.journaling():
		probe = u.journalFirst(rec.Store(), probe)
	}
	rec.EnableTx(probe, u.warn)
	rec.OverlayWhen(u.opts.Review)
	u.txns.set(rec)
}

// journaling says whether bash commands are to run on the tree,
// journaled (the default), rather than over an overlay (TINY_TX=overlay).
func (u *Undo) journaling() bool {
	return !strings.EqualFold(strings.TrimSpace(u.opts.Getenv("TINY_TX")), "overlay")
}

// journalFirst probes the journal once; where it cannot run, commands
// run over the overlay as orProbe says (one line says why they are not
// journaled).
func (u *Undo) journalFirst(cs *checkpoint.Store, orProbe func() error) func() error {
	return func() error {
		err := journalProbe(u.opts.Sandbox, cs)
		if err == nil {
			cs.SetJournal(true)
			return nil
		}
		cs.SetJournal(false)
		oerr := orProbe()
		if oerr == nil {
			u.warn("tiny-go: commands run over an overlay of the working directory, not on it (" + err.Error() + "): a file they write is copied whole, and other programs see their changes only when they end")
		}
		return oerr
	}
}

// journalProbe runs `sh -c :` journaled once: the kernel may refuse
// seccomp notification, or the sandbox the namespaces its init needs.
func journalProbe(sb *sandbox.Sandbox, cs *checkpoint.Store) error {
	if err := sb.TrapRefusal(); err != nil {
		return err
	}
	txn, err := cs.BeginJournalTx()
	if err != nil {
		return err
	}
	defer txn.Discard()
	tree, dir, _ := txn.Journal()
	cmd, stderr := probeCommand()
	cmd.Dir = tree
	sup, err := tools.StartJournaled(sb, cmd, tree, dir, nil)
	if err != nil {
		return err
	}
	werr := cmd.Wait()
	if err := sup.Stop(); err != nil {
		return err
	}
	return probeFailure(werr, stderr)
}

// probeCommand is `sh -c :` in a process group of its own that dies with
// tiny-go, its standard error kept.
func probeCommand() (*exec.Cmd, *strings.Builder) {
	cmd := exec.Command("/bin/sh", "-c", ":")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	cmd.SysProcAttr = procs.DiesWithUs(&syscall.SysProcAttr{Setpgid: true})
	return cmd, &stderr
}

// probeFailure is why a probe's command failed: the init's one line when
// it said one, nil when it ran.
func probeFailure(err error, stderr *strings.Builder) error {
	if err == nil {
		return nil
	}
	if line := strings.TrimSpace(stderr.String()); line != "" {
		return errors.New(strings.TrimPrefix(line, "tiny-go: namespace init: "))
	}
	return err
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
		cmd, stderr := probeCommand()
		if err := sb.StartOverlay(cmd, sandbox.Overlay{Lower: lower, Upper: upper, Work: work}); err != nil {
			return err
		}
		return probeFailure(cmd.Wait(), stderr)
	}
}
