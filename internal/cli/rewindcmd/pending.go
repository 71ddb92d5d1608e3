package rewindcmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"

	"github.com/tiny-agent/tiny-go/internal/cli/cmdutil"
	"github.com/tiny-agent/tiny-go/internal/store"
)

// ErrInProgress: the session's rewind journal belongs to a rewind
// that is still running in another process (it holds the session file's
// lock), so it must not be finished here.
var ErrInProgress = errors.New("rewind in progress")

// FinishPending completes a rewind of the session at path that was
// interrupted (killed midway, its journal rewind.json left beside the
// session) before anything opens the session, so nothing goes on with a
// tree that is half at one turn and half at another. It says so on w.
// It returns ErrInProgress while another process holds the session
// (a rewind or a run that is still going).
func FinishPending(ctx context.Context, path string, getenv func(string) string, w io.Writer) error {
	if _, ok := store.IDOfPath(path); !ok {
		return nil // a file outside a sessions directory has no sidecar
	}
	if _, err := store.SidecarDir(path, false); err != nil {
		return nil // no sidecar: nothing was rewound
	}
	j, err := Pending(path)
	var refused *refusedRewindError
	if errors.As(err, &refused) {
		fmt.Fprintf(w, "%s: %v\n", cmdutil.ProgramName, err)
		return nil
	}
	if err != nil || j == nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return ErrInProgress
		}
		return err
	}
	// The rewind needs no more than the shared lock it takes itself; the
	// exclusive one only proves nobody else is at it. Released before the
	// caller opens the session (a second descriptor would conflict).
	defer f.Close()
	if j, err = Pending(path); err != nil || j == nil {
		return err // finished by the other process meanwhile
	}
	capBytes, err := CheckpointCap(getenv)
	if err != nil {
		return cmdutil.UsageError{Err: err}
	}
	out, err := Execute(ctx, j, capBytes, true)
	if err != nil {
		return fmt.Errorf("session %s has an interrupted rewind (to before turn %d) that could not be finished: %w; run `tiny-go session rewind` on it to finish it", path, j.Turn.N, err)
	}
	msg := fmt.Sprintf("%s: finished an interrupted rewind of %s to before turn %d", cmdutil.ProgramName, SessionLabel(path), j.Turn.N)
	if out.Files != nil {
		msg += fmt.Sprintf(" (%d restored, %d created, %d deleted)", len(out.Files.Restored), len(out.Files.Created), len(out.Files.Deleted))
	}
	if out.Fork != nil {
		msg += "; its conversation continues in session " + out.Fork.ID
	}
	fmt.Fprintln(w, msg)
	return nil
}

// SessionLabel is the session id of a canonical session path, else the
// path.
func SessionLabel(path string) string {
	if id, ok := store.IDOfPath(path); ok {
		return "session " + id
	}
	return path
}

// FinishAllPending runs FinishPending for every listed session;
// it returns the ids whose rewind is still in progress elsewhere, and
// whether any rewind was finished (the listing is then out of date: a
// rewind may fork a session).
func FinishAllPending(ctx context.Context, sums []store.Summary, getenv func(string) string, w io.Writer) (inProgress map[string]bool, finished bool, err error) {
	inProgress = map[string]bool{}
	for _, s := range sums {
		if _, err := store.SidecarDir(s.Path, false); err != nil {
			continue // no sidecar, nothing was rewound
		}
		j, err := Pending(s.Path)
		if err != nil || j == nil {
			// A damaged journal is reported by the commands that open
			// that session; the listing goes on.
			continue
		}
		switch err := FinishPending(ctx, s.Path, getenv, w); {
		case errors.Is(err, ErrInProgress):
			inProgress[s.ID] = true
		case err != nil:
			return nil, false, err
		default:
			finished = true
		}
	}
	return inProgress, finished, nil
}
