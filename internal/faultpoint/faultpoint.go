// Package faultpoint names the instants of tiny-go's multi-step writes
// (a command's apply, its states, a rewind) at which a test's child
// process kills itself, so a test can land a SIGKILL exactly there. In
// production no hook is set and Hit is a nil check.
package faultpoint

import "sync/atomic"

var hook atomic.Pointer[func(name string)]

// Set installs f, called at every Hit (a test child, before its main).
func Set(f func(name string)) { hook.Store(&f) }

// Hit says that the instant name is reached.
func Hit(name string) {
	if f := hook.Load(); f != nil {
		(*f)(name)
	}
}

// The named instants.
const (
	TxJournal  = "tx.journal"  // an apply's journal is written, nothing moved
	TxStep     = "tx.step"     // after each change an apply moved
	TxMirror   = "tx.mirror"   // a renamed directory's mirror made in orig/, the directory not yet renamed
	TxLayers   = "tx.layers"   // every change moved, the upper layer removed, still pending
	TxStates   = "tx.states"   // applied and finished, states.json not written
	TxRecorded = "tx.recorded" // states.json written, the after record not appended
	RewindPut  = "rewind.put"  // before each path a rewind puts back
	RewindDir  = "rewind.dir"  // a directory a rewind makes, made under its temporary name
	RewindDone = "rewind.done" // every path put back, the rewind not recorded
)
