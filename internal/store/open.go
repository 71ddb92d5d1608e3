// Opening an existing session file: one pass that reduces it and checks its
// integrity records, then the torn tail cut.

package store

import (
	"errors"
	"fmt"
	"os"

	"github.com/tiny-agent/tiny-go/internal/session"
)

// open finishes Open and OpenFile on the opened file. wantID is the id the
// file name promises ("" for a non-canonical name). It owns f.
func open(f *os.File, dir *os.File, wantID string, opts Options) (*Store, error) {
	opts = opts.withDefaults()
	label := wantID
	if label == "" {
		label = f.Name()
	}
	s, err := newStore(wantID, f, dir, opts)
	if err != nil {
		f.Close()
		return nil, err
	}
	fail := func(err error) (*Store, error) {
		s.closeFiles()
		return nil, err
	}
	if err := lockFile(f, label); err != nil {
		return fail(err)
	}
	r, read, c, check, err := readState(f, label)
	if check == nil {
		return fail(err) // the integrity records could not be read
	}
	if err = changed(label, err); errors.Is(err, session.ErrMappingFault) {
		return fail(err)
	}
	if err != nil {
		return fail(fmt.Errorf("open session %s: %w", label, err))
	}
	if c != nil {
		return fail(&CorruptError{Path: f.Name(), Corruption: c})
	}
	st := r.State()
	if wantID != "" && st.Header.ID != wantID {
		return fail(fmt.Errorf("open session %s: header id %s does not match the file name", wantID, st.Header.ID))
	}
	s.id = st.Header.ID
	s.reducer = r
	s.size = st.RepairedLength
	s.nextSeq = st.Facts + 1
	if s.ledger, err = check.ledger(s.path); err != nil {
		return fail(err)
	}
	if read > s.size {
		if err := s.cutTornTail(opts.Fsync); err != nil {
			return fail(err)
		}
	}
	if err := s.restamp(); err != nil {
		return fail(fmt.Errorf("open session %s: %w", s.id, err))
	}
	return s, nil
}

// readState reads the whole file once into its state, checking the
// integrity records on the way; err is the read's own, for open to judge.
// readState reads the file once into its state, checking the integrity
// records on the way. check is nil when they could not be read (err says
// why, whole); otherwise err is the read's own, for open to judge.
func readState(f *os.File, label string) (r *session.Reducer, read int64, c *session.Corruption, check *IntegrityCheck, err error) {
	// Reduced in one pass (ReadSession): memory is the state, not the file,
	// and the file's mapping is gone once the pass is (nothing of the
	// state references it).
	// The integrity records are checked as the lines are reduced: one
	// read of the file, hashed and parsed together.
	// A resume needs the active context, so the text of the messages a
	// compaction summarized is released as the file is reduced (issue 17);
	// the rare file whose compaction retains such a message is read again
	// in full.
	src := openSource(f)
	for _, lean := range []bool{true, false} {
		if check, err = NewIntegrityCheck(f.Name()); err != nil {
			src.close()
			return nil, 0, nil, nil, fmt.Errorf("open session %s: %w", label, err)
		}
		r, read, c, err = src.read(session.ReadHooks{Line: check.Line, ReleaseCompacted: lean})
		if !errors.Is(err, session.ErrReleasedTextNeeded) {
			break
		}
	}
	src.close()
	return r, read, c, check, err
}

// cutTornTail cuts the torn tail, never committed, so the next line
// starts right after the last LF.
// cutTornTail cuts the torn tail, which was never committed, so the next
// line starts right after the last LF.
func (s *Store) cutTornTail(fsync bool) error {
	if err := s.sink.Truncate(s.size); err != nil {
		return fmt.Errorf("open session %s: repair torn tail: %w", s.id, err)
	}
	if fsync {
		if err := s.sink.Sync(); err != nil {
			return fmt.Errorf("open session %s: repair torn tail: %w", s.id, err)
		}
		if err := s.syncDir(); err != nil {
			return fmt.Errorf("open session %s: repair torn tail: %w", s.id, err)
		}
	}
	return nil
}
