// Package sessioncmd holds `tiny-go session`'s inspection commands (state,
// plan, verify, repair) and what every session command shares: naming a
// session by id, id prefix or file, opening and reducing it, and reading
// its transactions.
package sessioncmd

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/tiny-agent/tiny-go/internal/cli/cmdutil"
	"github.com/tiny-agent/tiny-go/internal/session"
	"github.com/tiny-agent/tiny-go/internal/store"
)

// sessionPath is the path of the session that arg names (see
// openSession), for commands that open it their own way: the file is not
// read.
func Path(a *cmdutil.Factory, arg string) (string, error) {
	f, err := Open(a, arg)
	if err != nil {
		return "", err
	}
	path := f.Name()
	f.Close()
	return path, nil
}

// NoSession is the usage error of an id that names no session here.
func NoSession(id, cwd string) error {
	return cmdutil.UsageErrorf("no session %s in this directory (%s); tiny-go session list shows its sessions", id, cwd)
}

// looksLikePath tells a file argument from a mistyped session id.
func looksLikePath(arg string) bool {
	return strings.ContainsRune(arg, filepath.Separator) || strings.HasSuffix(arg, ".jsonl")
}

// openSession opens the session that arg names, read-only: an existing
// path is a file; otherwise a session id is looked up in the sessions
// directory of the working directory. Commands stream it; the caller
// closes it.
func Open(a *cmdutil.Factory, arg string) (*os.File, error) {
	if _, statErr := os.Stat(arg); statErr != nil && (store.ValidID(arg) || !looksLikePath(arg)) {
		cwd, err := a.WorkDir()
		if err != nil {
			return nil, err
		}
		if arg, err = ExpandID(cwd, arg); err != nil {
			return nil, err
		}
		f, err := store.OpenByID(cwd, arg)
		if errors.Is(err, fs.ErrNotExist) || !store.ValidID(arg) {
			return nil, NoSession(arg, cwd)
		}
		if err != nil {
			return nil, cmdutil.UsageError{Err: err}
		}
		return f, nil
	}
	f, err := os.Open(arg)
	if err != nil {
		return nil, cmdutil.UsageError{Err: PathError(arg, err)}
	}
	return f, nil
}

// reduceSession reduces the session f holds (named arg), streamed: the
// file is never held whole. A read error is a usage error, in one line.
func reduceSession(f *os.File, arg string) (*session.State, *session.Corruption, error) {
	r, _, c, err := store.ReadSession(f, session.ReadHooks{})
	if err != nil {
		return nil, nil, cmdutil.UsageError{Err: PathError(arg, err)}
	}
	if c != nil {
		return nil, c, nil
	}
	return r.State(), nil, nil
}

// PathError phrases a file error without Go's "open x: " prefix doubling.
func PathError(path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return fmt.Errorf("cannot read %s: %w", path, err)
}
