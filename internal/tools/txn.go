package tools

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"

	"github.com/tiny-agent/tiny-go/internal/journal"
	"github.com/tiny-agent/tiny-go/internal/sandbox"
)

// Transactions lets bash run a command as a transaction: over a private
// view of the working directory (an overlay, docs/checkpoints.md), whose
// changes reach the tree when the command has ended.
type Transactions interface {
	// For is the transaction of the tool call of ctx (StartedID), nil when
	// the command runs on the tree itself.
	For(ctx context.Context) Transaction
	// Blocked is why the command of ctx must not run (the checkpoint that
	// lets a rewind undo it could not be written: a full disk), nil when
	// it may.
	Blocked(ctx context.Context) error
}

// notRun is the result of a command that Transactions.Blocked stopped.
func notRun(err error) Result {
	return Result{Content: fmt.Sprintf("The command was not run: tiny-go could not record the checkpoint that lets a rewind undo it (%v). Free space on the disk, then run it again.", err), IsError: true}
}

// Transaction is one command's.
type Transaction interface {
	// Dirs are the overlay's layers.
	Dirs() (lower, upper, work string)
	// Commit brings the command's changes into the tree; conflicts are
	// the paths another program changed meanwhile, left as that program
	// left them, each with where the command's version was kept.
	Commit() (conflicts []string, err error)
	// Discard drops the command's changes; the tree is untouched.
	Discard() error
	// Preview describes the command's changes, for a review; empty when
	// there are none.
	Preview() ([]string, error)
}

// Reviewer shows a command's changes (Transaction.Preview) and answers
// whether they are to be applied (--approval review).
type Reviewer func(ctx context.Context, command string, changes []string) (apply bool, err error)

// ReviewRejected is the result's note for changes the user did not apply
// (the tool log tells such a call from a failure by it).
const ReviewRejected = rejected

// rejected is the result's note for changes the user did not apply.
const rejected = "\n\nThe user did not apply this command's changes: the working directory is as it was before the command."

// review asks about tx's changes when there is a reviewer and something
// changed; false means they were discarded. A sealed command's preview
// says so.
func review(ctx context.Context, r Reviewer, command string, tx Transaction, sealed bool) (bool, error) {
	if r == nil || tx == nil {
		return true, nil
	}
	lines, err := tx.Preview()
	if err != nil || len(lines) == 0 {
		return true, err
	}
	if sealed {
		lines = append([]string{sealedNote}, lines...)
	}
	ok, err := r(ctx, command, lines)
	if err != nil || !ok {
		return false, tx.Discard()
	}
	return true, nil
}

// journaled is a transaction whose command runs on the tree itself, each
// change's pre-image journaled (checkpoint.Txn.Journal).
type journaled interface {
	Journal() (tree, dir string, ok bool)
	// JournalStarted records the command's first process (the recovery
	// after a SIGKILL of tiny-go waits for it to end).
	JournalStarted(pid int) error
}

// starterOf is how bash starts the command of tx: over its overlay,
// journaled (jr, whose stop ends the journal once the command has ended),
// or on the tree as it is.
func starterOf(sb *sandbox.Sandbox, tx Transaction) (start func(*exec.Cmd) error, jr *journalRun) {
	if tx == nil {
		return sb.Start, nil
	}
	if j, ok := tx.(journaled); ok {
		if tree, dir, ok := j.Journal(); ok {
			jr = &journalRun{sb: sb, tree: tree, dir: dir, started: j.JournalStarted}
			return jr.start, jr
		}
	}
	lower, upper, work := tx.Dirs()
	ov := sandbox.Overlay{Lower: lower, Upper: upper, Work: work}
	return func(cmd *exec.Cmd) error { return sb.StartOverlay(cmd, ov) }, nil
}

// journalRun is one command journaled on the tree.
type journalRun struct {
	sb        *sandbox.Sandbox
	tree, dir string
	started   func(pid int) error
	sup       *journal.Supervision
}

// start starts cmd journaled, and keeps its supervision.
func (j *journalRun) start(cmd *exec.Cmd) error {
	sup, err := StartJournaled(j.sb, cmd, j.tree, j.dir, j.started)
	j.sup = sup
	return err
}

// StartJournaled starts cmd through sb with the journal's filter
// installed by its init, and supervises it, journaling into dir what it
// changes under tree; started (nil: none) is told the pid of its first
// process before anything of it is journaled. A command that could not
// be supervised is killed: it must not run on unjournaled. Stop the
// supervision once every process of the command has ended.
func StartJournaled(sb *sandbox.Sandbox, cmd *exec.Cmd, tree, dir string, started func(pid int) error) (*journal.Supervision, error) {
	filter, err := journal.Filter()
	if err != nil {
		return nil, err
	}
	listener, err := sb.StartTrapped(cmd, filter)
	if err != nil {
		return nil, err
	}
	if started != nil {
		err = started(cmd.Process.Pid)
	}
	var sup *journal.Supervision
	if err == nil {
		sup, err = journal.Attach(listener, tree, dir, journal.Options{Exclude: sb.JournalExclude(tree), Writable: sb.MayWrite, Volatile: true})
	} else {
		listener.Close()
	}
	if err != nil {
		// Its trapped calls fail (ENOSYS) with the listener closed.
		cmd.Process.Kill()
		cmd.Wait()
		return nil, err
	}
	return sup, nil
}

// stop ends the journal once every process of the command has ended,
// and says, for the model, what it could not keep; "" when all went well.
func (j *journalRun) stop() string {
	if j == nil || j.sup == nil {
		return ""
	}
	if err := j.sup.Stop(); err != nil {
		return fmt.Sprintf("\n\nSome of the command's changes were refused: tiny-go could not keep what they would have destroyed, so that a rewind can undo them (%v). Free space on the disk if it is full, then run the command again.", err)
	}
	return ""
}

// commitNote commits tx and says, for the model, what did not reach the
// tree; "" when everything did.
func commitNote(tx Transaction) string {
	if tx == nil {
		return ""
	}
	conflicts, err := tx.Commit()
	var b strings.Builder
	for _, c := range conflicts {
		fmt.Fprintf(&b, "\n\nNot applied: %s was changed by another program while the command ran; its version stays.", c)
	}
	var applied interface{ ChangesApplied() bool }
	switch {
	case err == nil:
	case errors.As(err, &applied) && applied.ChangesApplied():
		fmt.Fprintf(&b, "\n\nThe command's changes were all applied to the working directory, but a rewind may not be able to undo them yet: %v", err)
	default:
		fmt.Fprintf(&b, "\n\nThe command's changes could not all be applied to the working directory: %v", err)
	}
	return b.String()
}
