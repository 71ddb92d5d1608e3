package checkpoint

import (
	"errors"
	"strings"
	"sync"
	"syscall"

	"github.com/tiny-agent/tiny-go/internal/faultpoint"
)

// txMode is a Recorder's state for commands that run as transactions.
type txMode struct {
	probe   func() error // asked once, at the first command: can commands run over an overlay here?
	warn    func(string)
	probeMu sync.Mutex
	once    sync.Once // recovery of what killed processes left
	probed  bool      // the probe answered (not for want of space)
	refused bool
	mu      sync.Mutex
	pending map[string]*Txn // toolStartedID -> its transaction, until the call ended
	// overlayNow, when set and true, makes the next transactions run over
	// an overlay even where the store journals (a review).
	overlayNow func() bool
	blocked    map[string]error // toolStartedID -> why it must not run, until the call ended
}

// FallbackLine is the one line said when commands cannot be transactions.
func FallbackLine(reason string) string {
	return "tiny-go: commands run without an overlay (" + reason + "); checkpoints fall back to watching the tree, which costs a whole-tree baseline per process (run as root or enable unprivileged user namespaces, kernel 5.11+, with the working directory on a local file system)"
}

// EnableTx makes bash calls transactions (tx.go). probe says, once, at the
// first command, whether commands can run over an overlay here; when it
// cannot, warn gets FallbackLine and commands are snapshotted as before.
func (r *Recorder) EnableTx(probe func() error, warn func(string)) {
	r.tx = &txMode{probe: probe, warn: warn, pending: map[string]*Txn{}, blocked: map[string]error{}}
}

// OverlayWhen makes bash calls run over an overlay, not journaled, while
// f says so (--approval review: the changes are shown before they land).
func (r *Recorder) OverlayWhen(f func() bool) {
	if r.tx != nil {
		r.tx.overlayNow = f
	}
}

// Txn is the transaction of the bash call toolStartedID, nil when it has
// none (the command then runs on the tree itself).
func (r *Recorder) Txn(toolStartedID string) *Txn {
	if r.tx == nil {
		return nil
	}
	r.tx.mu.Lock()
	defer r.tx.mu.Unlock()
	return r.tx.pending[toolStartedID]
}

// beginTx begins the transaction of a bash call and records it; ok is
// false when the call is to be snapshotted instead. On a full disk the
// call is blocked (Blocked): run without its checkpoint, no rewind could
// undo it.
func (r *Recorder) beginTx(id, tool string, beyond []string) (after func(), ok bool) {
	m := r.tx
	if m == nil || tool != "bash" {
		return nil, false
	}
	usable, err := m.usable(r.store)
	if err == nil && !usable {
		return nil, false
	}
	var txn *Txn
	switch {
	case err != nil:
	case m.overlayNow != nil && m.overlayNow():
		txn, err = r.store.BeginOverlayTx()
	default:
		txn, err = r.store.BeginTx()
	}
	if err == nil {
		if err = r.append(Record{Tx: txn.ID(), Beyond: beyond}, id, tool, PhaseBefore); err != nil {
			txn.Discard()
		}
	}
	if err != nil && isNoSpace(err) {
		return m.block(id, err), true
	}
	if err != nil {
		if m.warn != nil {
			m.warn(FallbackLine("cannot begin a transaction: " + rootCause(err)))
		}
		return nil, false
	}
	m.mu.Lock()
	m.pending[id] = txn
	m.mu.Unlock()
	return func() {
		// A command that never ran (or whose tool did not commit) changed
		// nothing the upper layer does not hold: commit what is there.
		txn.Commit()
		faultpoint.Hit(faultpoint.TxRecorded)
		r.keepPaths(id, txn.changed)
		m.mu.Lock()
		delete(m.pending, id)
		m.mu.Unlock()
		r.append(Record{Tx: txn.ID(), Bytes: txn.Bytes()}, id, tool, PhaseAfter)
	}, true
}

// block makes the call id blocked by err until its after func runs.
func (m *txMode) block(id string, err error) (after func()) {
	m.mu.Lock()
	m.blocked[id] = err
	m.mu.Unlock()
	return func() {
		m.mu.Lock()
		delete(m.blocked, id)
		m.mu.Unlock()
	}
}

// Blocked is why the bash call toolStartedID must not run (its checkpoint
// could not be written: a full disk), nil when it may.
func (r *Recorder) Blocked(toolStartedID string) error {
	if r.tx == nil {
		return nil
	}
	r.tx.mu.Lock()
	defer r.tx.mu.Unlock()
	return r.tx.blocked[toolStartedID]
}

// usable probes once; a refusal is said once and lasts for the process.
// A probe that failed for want of space (a full disk) is no refusal: it
// is returned, and the next command probes again.
func (m *txMode) usable(s *Store) (bool, error) {
	m.probeMu.Lock()
	defer m.probeMu.Unlock()
	if m.probed {
		return !m.refused, nil
	}
	m.once.Do(func() {
		if _, err := s.RecoverTx(); err != nil && m.warn != nil {
			for l := range strings.SplitSeq(err.Error(), "\n") {
				m.warn("tiny-go: " + l)
			}
		}
	})
	err := m.probe()
	if err != nil && isNoSpace(err) {
		return false, err
	}
	if err != nil && m.warn != nil {
		m.warn(FallbackLine(err.Error()))
	}
	m.probed, m.refused = true, err != nil
	return !m.refused, nil
}

// isNoSpace: err is a full disk or an exhausted quota, which pass.
func isNoSpace(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) ||
		strings.Contains(err.Error(), "no space left on device") || strings.Contains(err.Error(), "disk quota exceeded")
}

// TxUsable reports whether bash calls are transactions (probing once).
func (r *Recorder) TxUsable() bool {
	if r.tx == nil {
		return false
	}
	ok, _ := r.tx.usable(r.store)
	return ok
}
