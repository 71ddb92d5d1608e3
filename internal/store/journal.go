package store

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
)

// Journal is an append-only file of JSON lines beside a session (the
// approvals' rules, reasoning details, the shell escape's record): one
// write a line, synced when the journal is durable. The file is opened on
// the first Append; a line a crash tore is cut off then, so the next one
// starts clean and a reader, which stops at a line without its newline,
// loses only what never completed.
type Journal struct {
	sessionPath, name string
	durable           bool

	mu sync.Mutex
	f  *os.File
}

// NewJournal returns the journal name beside the session at sessionPath.
// A durable journal syncs every line and, when it creates the file, the
// directories that name it.
func NewJournal(sessionPath, name string, durable bool) *Journal {
	return &Journal{sessionPath: sessionPath, name: name, durable: durable}
}

// Append writes line, which ends in a newline, and syncs it when durable.
func (j *Journal) Append(line []byte) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if err := j.openLocked(); err != nil {
		return fmt.Errorf("%s: %w", j.name, err)
	}
	if _, err := j.f.Write(line); err != nil {
		return fmt.Errorf("write %s: %w", j.name, err)
	}
	if j.durable {
		if err := j.f.Sync(); err != nil {
			return fmt.Errorf("sync %s: %w", j.name, err)
		}
	}
	return nil
}

func (j *Journal) openLocked() error {
	if j.f != nil {
		return nil
	}
	dir, err := SidecarDir(j.sessionPath, true)
	if err != nil {
		return err
	}
	f, err := OpenSidecarFile(dir, j.name, os.O_RDWR|os.O_CREATE)
	if err != nil {
		return err
	}
	if err := cutTornTail(f); err != nil {
		f.Close()
		return err
	}
	if j.durable {
		// The file's entry in the sidecar directory, and that directory's
		// in the sessions directory, must survive a power loss too.
		for _, d := range []string{dir, filepath.Dir(dir)} {
			if err := syncDirPath(d); err != nil {
				f.Close()
				return err
			}
		}
	}
	j.f = f
	return nil
}

// cutTornTail truncates f after its last newline and leaves the offset
// there.
func cutTornTail(f *os.File) error {
	data, err := io.ReadAll(f)
	if err != nil {
		return err
	}
	keep := int64(bytes.LastIndexByte(data, '\n') + 1)
	if keep != int64(len(data)) {
		if err := f.Truncate(keep); err != nil {
			return err
		}
	}
	_, err = f.Seek(keep, io.SeekStart)
	return err
}

// Close closes the file, if it was opened.
func (j *Journal) Close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		return nil
	}
	err := j.f.Close()
	j.f = nil
	return err
}
