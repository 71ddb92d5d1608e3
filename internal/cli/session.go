package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tiny-agent/tiny-go/internal/session"
	"github.com/tiny-agent/tiny-go/internal/store"
)

// newSessionCommand is `tiny-go session`: inspection of session files.
// list, show, state, plan and verify are read-only and take no session
// lock; abort, rewind and fork write.
func newSessionCommand(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "session <command>",
		Short: "Inspect session files",
		Long: `Inspect the durable session files of a working directory
(<cwd>/.tiny-agent/sessions). list, show, state, plan and verify only read:
they never repair a torn tail or take the session lock. abort ends an open
operation durably, without running anything; repair cuts a session changed
by another program back to its last verified commit; rewind puts files back
and writes a fork; fork writes a new session.`,
		RunE: runGroup(a),
	}
	cmd.AddCommand(
		newSessionListCommand(a),
		newSessionShowCommand(a),
		newSessionStateCommand(a),
		newSessionPlanCommand(a),
		newSessionVerifyCommand(a),
		newSessionRepairCommand(a),
		newSessionAbortCommand(a),
		newSessionForkCommand(a),
		newSessionRewindCommand(a),
	)
	return cmd
}

// sessionPath is the path of the session that arg names (see
// openSession), for commands that open it their own way: the file is not
// read.
func (a *app) sessionPath(arg string) (string, error) {
	f, err := a.openSession(arg)
	if err != nil {
		return "", err
	}
	path := f.Name()
	f.Close()
	return path, nil
}

// noSession is the usage error of an id that names no session here.
func noSession(id, cwd string) error {
	return usageErrorf("no session %s in this directory (%s); tiny-go session list shows its sessions", id, cwd)
}

// looksLikePath tells a file argument from a mistyped session id.
func looksLikePath(arg string) bool {
	return strings.ContainsRune(arg, filepath.Separator) || strings.HasSuffix(arg, ".jsonl")
}

// openSession opens the session that arg names, read-only: an existing
// path is a file; otherwise a session id is looked up in the sessions
// directory of the working directory. Commands stream it; the caller
// closes it.
func (a *app) openSession(arg string) (*os.File, error) {
	if _, statErr := os.Stat(arg); statErr != nil && (store.ValidID(arg) || !looksLikePath(arg)) {
		cwd, err := a.workDir()
		if err != nil {
			return nil, err
		}
		if arg, err = expandSessionID(cwd, arg); err != nil {
			return nil, err
		}
		f, err := store.OpenByID(cwd, arg)
		if errors.Is(err, fs.ErrNotExist) || !store.ValidID(arg) {
			return nil, noSession(arg, cwd)
		}
		if err != nil {
			return nil, usageError{Err: err}
		}
		return f, nil
	}
	f, err := os.Open(arg)
	if err != nil {
		return nil, usageError{Err: pathError(arg, err)}
	}
	return f, nil
}

// reduceSession reduces the session f holds (named arg), streamed: the
// file is never held whole. A read error is a usage error, in one line.
func reduceSession(f *os.File, arg string) (*session.State, *session.Corruption, error) {
	r, _, c, err := store.ReadSession(f, session.ReadHooks{})
	if err != nil {
		return nil, nil, usageError{Err: pathError(arg, err)}
	}
	if c != nil {
		return nil, c, nil
	}
	return r.State(), nil, nil
}

// pathError phrases a file error without Go's "open x: " prefix doubling.
func pathError(path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return fmt.Errorf("cannot read %s: %w", path, err)
}
