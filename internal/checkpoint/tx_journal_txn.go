package checkpoint

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"golang.org/x/sys/unix"

	"github.com/tiny-agent/tiny-go/internal/faultpoint"
	"github.com/tiny-agent/tiny-go/internal/journal"
	"github.com/tiny-agent/tiny-go/internal/overlay"
	"github.com/tiny-agent/tiny-go/internal/statekey"
)

// BeginJournalTx starts a journaled transaction: its command is to run
// on the tree itself, with package journal keeping each change's
// pre-image in tx/<id>/journal (on the tree's file system, so a removed
// inode is kept by a hard link).
func (s *Store) BeginJournalTx() (*Txn, error) {
	var rst, tst unix.Stat_t
	if err := os.MkdirAll(s.TxRoot(), 0o700); err != nil {
		return nil, err
	}
	if err := unix.Stat(s.TxRoot(), &rst); err != nil {
		return nil, err
	}
	if err := unix.Stat(s.cwd, &tst); err != nil {
		return nil, err
	}
	if rst.Dev != tst.Dev {
		return nil, errors.New("the checkpoint store is on another file system than the working directory")
	}
	id := uuid.Must(uuid.NewV7()).String()
	if err := os.MkdirAll(filepath.Join(s.TxRoot(), id, journalDirName), 0o700); err != nil {
		return nil, err
	}
	// Pending until its states are written; locked while this process
	// runs it, so another's recovery leaves it alone.
	if err := os.MkdirAll(filepath.Join(s.TxRoot(), journalPendingDir), 0o700); err != nil {
		return nil, err
	}
	lock, err := os.OpenFile(filepath.Join(s.TxRoot(), journalPendingDir, id), os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX); err != nil {
		lock.Close()
		return nil, err
	}
	// Sealed (a forged mark is refused), with room for the pid
	// JournalStarted writes taken now: on a full disk the command is then
	// not run (the before record fails the same way) rather than run
	// without its mark.
	mac, err := statekey.Hex(journalPurpose(id))
	if err == nil {
		_, err = lock.Write([]byte(fmt.Sprintf("%s\n%-47s\n", mac, "0 0")))
	}
	if err != nil {
		lock.Close()
		os.Remove(lock.Name())
		return nil, err
	}
	return &Txn{s: s, jid: id, jlock: lock}, nil
}

// JournalStarted records the pid of the command's first process (the
// init of its PID namespace, which the kernel lets end only once every
// other process of the namespace has): the recovery after a SIGKILL of
// tiny-go waits until it is gone, not to take what a dying process still
// writes as the command's.
func (t *Txn) JournalStarted(pid int) error {
	if t.jlock == nil {
		return nil
	}
	_, err := t.jlock.WriteAt([]byte(fmt.Sprintf("%-47s\n", fmt.Sprintf("%d %d", pid, procStart(pid)))), macLen+1)
	return err
}

// procStart is pid's start time (field 22 of /proc/<pid>/stat), 0 when
// it is gone.
func procStart(pid int) uint64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0
	}
	fields := strings.Fields(string(data[i+1:]))
	if len(fields) < 20 {
		return 0
	}
	n, _ := strconv.ParseUint(fields[19], 10, 64)
	return n
}

// macLen is the length of a pending mark's seal (hex).
const macLen = 64

func journalPurpose(id string) string { return "tx/" + id + "/" + journalPendingDir }

// checkMark refuses a pending mark not sealed with tiny-go's key.
func checkMark(id string, mark []byte) error {
	ok, err := statekey.Check(string(mark[:min(len(mark), macLen)]), journalPurpose(id))
	if err != nil || ok {
		return err
	}
	return &overlay.RefusedError{ID: id, What: "its pending marker", Err: statekey.ErrForged}
}

// commandGone says whether the command a pending mark names has ended.
func commandGone(mark []byte) bool {
	var pid int
	var start uint64
	if len(mark) > macLen {
		mark = mark[macLen+1:]
	}
	if _, err := fmt.Sscanf(string(mark), "%d %d", &pid, &start); err != nil || pid <= 0 {
		return true
	}
	return procStart(pid) != start
}

// journalPendingDir holds a marker per journaled transaction whose states
// are not written yet.
const journalPendingDir = "journal-pending"

// recoverJournals writes the states of the journaled transactions a
// killed process left (their commands died with it: the journal on disk
// is every change that went on).
func (s *Store) recoverJournals() ([]string, error) {
	dir := filepath.Join(s.TxRoot(), journalPendingDir)
	names, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil
	}
	var done []string
	var errs []error
	for _, n := range names {
		id := n.Name()
		if !filepath.IsLocal(id) {
			continue
		}
		f, err := os.OpenFile(filepath.Join(dir, id), os.O_RDWR, 0)
		if err != nil {
			continue
		}
		locked := within(2*time.Second, func() bool { return unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) == nil })
		if !locked {
			f.Close()
			continue // still running in another process, or still dying
		}
		mark, _ := io.ReadAll(f)
		if err := checkMark(id, mark); err != nil {
			// Said once: the mark moves to refused/, its folder stays.
			os.MkdirAll(filepath.Join(s.TxRoot(), "refused"), 0o700)
			os.Rename(filepath.Join(dir, id), filepath.Join(s.TxRoot(), "refused", id))
			f.Close()
			errs = append(errs, err)
			continue
		}
		if !within(2*time.Second, func() bool { return commandGone(mark) }) {
			f.Close()
			continue // its command still dying: the next start finishes it
		}
		if _, err := s.writeJournalStates(id); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, fmt.Errorf("finishing command transaction %s: %w", id, err))
		} else {
			os.Remove(filepath.Join(dir, id))
			done = append(done, id)
		}
		f.Close()
	}
	return done, errors.Join(errs...)
}

// within asks ok every 20 ms, up to d, until it says yes.
func within(d time.Duration, ok func() bool) bool {
	for end := time.Now().Add(d); !ok(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(end) {
			return false
		}
	}
	return true
}

// settle ends the transaction's pending mark.
func (t *Txn) settle() {
	if t.jlock == nil {
		return
	}
	os.Remove(filepath.Join(t.s.TxRoot(), journalPendingDir, t.jid))
	t.jlock.Close()
	t.jlock = nil
}

// commitJournal records the states of a journaled command that has
// ended: its changes are in the tree already.
func (t *Txn) commitJournal() {
	dir := filepath.Join(t.s.TxRoot(), t.jid)
	if !journal.Changed(filepath.Join(dir, journalDirName)) {
		// Most commands change nothing: nothing to keep (a rewind reads a
		// missing transaction as one without changes).
		t.err = os.RemoveAll(dir)
		t.settle()
		return
	}
	faultpoint.Hit(faultpoint.TxStates)
	st, err := t.s.writeJournalStates(t.jid)
	if err != nil {
		// The changes are in the tree: only the record failed (a full
		// disk), and the next rewind plan writes it again.
		t.err = &NotRecordedError{Err: err}
		return
	}
	t.settle()
	for _, f := range st.After {
		t.changed = append(t.changed, f.Path)
	}
	t.bytes = st.Bytes
	t.s.account(st.Bytes)
}

// discardJournal undoes a journaled command: the tree is as before it.
func (t *Txn) discardJournal() error {
	dir := filepath.Join(t.s.TxRoot(), t.jid)
	if err := journal.Restore(filepath.Join(dir, journalDirName)); err != nil {
		return fmt.Errorf("undoing the command: %w", err)
	}
	defer t.settle()
	return os.RemoveAll(dir)
}

// writeJournalStates computes a journaled transaction's states and
// writes them, sealed, beside it; orig/ and patch/ are made anew each
// time (a conversion cut short by a SIGKILL is made again whole).
func (s *Store) writeJournalStates(id string) (*txStates, error) {
	dir := filepath.Join(s.TxRoot(), id)
	for _, d := range []string{"orig", "patch"} {
		if err := os.RemoveAll(filepath.Join(dir, d)); err != nil {
			return nil, err
		}
	}
	st, err := s.journalStates(id)
	if err != nil {
		return nil, err
	}
	data, err := sealStates(id, st)
	if err != nil {
		return nil, err
	}
	if err := writeAtomic(filepath.Join(dir, statesName), data, fileMode, false); err != nil {
		return nil, err
	}
	s.sealedStates.Store(id, st)
	return st, nil
}
