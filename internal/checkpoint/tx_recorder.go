package checkpoint

import (
	"strings"
	"sync"

	"github.com/tiny-agent/tiny-go/internal/faultpoint"
)

// txMode is a Recorder's state for commands that run as transactions.
type txMode struct {
	probe   func() error // asked once, at the first command: can commands run over an overlay here?
	warn    func(string)
	once    sync.Once
	refused bool
	mu      sync.Mutex
	pending map[string]*Txn // toolStartedID -> its transaction, until the call ended
}

// FallbackLine is the one line said when commands cannot be transactions.
func FallbackLine(reason string) string {
	return "tiny-go: commands run without an overlay (" + reason + "); checkpoints fall back to watching the tree, which costs a whole-tree baseline per process (run as root or enable unprivileged user namespaces, kernel 5.11+, with the working directory on a local file system)"
}

// EnableTx makes bash calls transactions (tx.go). probe says, once, at the
// first command, whether commands can run over an overlay here; when it
// cannot, warn gets FallbackLine and commands are snapshotted as before.
func (r *Recorder) EnableTx(probe func() error, warn func(string)) {
	r.tx = &txMode{probe: probe, warn: warn, pending: map[string]*Txn{}}
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
// false when the call is to be snapshotted instead.
func (r *Recorder) beginTx(id, tool string, beyond []string) (after func(), ok bool) {
	m := r.tx
	if m == nil || tool != "bash" || !m.usable(r.store) {
		return nil, false
	}
	txn, err := r.store.BeginTx()
	if err != nil {
		if m.warn != nil {
			m.warn(FallbackLine("cannot begin a transaction: " + rootCause(err)))
		}
		return nil, false
	}
	r.append(Record{Tx: txn.ID(), Beyond: beyond}, id, tool, PhaseBefore)
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

// usable probes once; a refusal is said once and lasts for the process.
func (m *txMode) usable(s *Store) bool {
	m.once.Do(func() {
		if _, err := s.RecoverTx(); err != nil && m.warn != nil {
			for l := range strings.SplitSeq(err.Error(), "\n") {
				m.warn("tiny-go: " + l)
			}
		}
		if err := m.probe(); err != nil {
			m.refused = true
			if m.warn != nil {
				m.warn(FallbackLine(err.Error()))
			}
		}
	})
	return !m.refused
}

// TxUsable reports whether bash calls are transactions (probing once).
func (r *Recorder) TxUsable() bool {
	return r.tx != nil && r.tx.usable(r.store)
}
