// Package reasoning keeps the reasoning details of a session's assistant
// messages beside the session file, in <session>.d/reasoning.jsonl.
//
// Providers need them back, byte for byte, with their assistant message on
// every later request (Gemini refuses a tool follow-up without them;
// Claude's thinking blocks carry signatures), but the session's assistant
// message is a closed shape shared with other runtimes. So each line here
// is {"entryId","adapter","model","details"}, keyed by the assistant entry
// id, and written (synced under --fsync) before that entry commits: a
// committed entry always finds its details, while details whose entry
// never committed (a crash or an abort in between) are never looked up.
// Details are sent back only to the adapter and model that produced them.
package reasoning

import (
	"bytes"
	"errors"
	"fmt"
	"sync"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/tiny-agent/tiny-go/internal/store"
)

// FileName is the sidecar file's name.
const FileName = "reasoning.jsonl"

// Store is the reasoning details of one session for one adapter and
// model. Its methods are safe for concurrent use.
type Store struct {
	sessionPath string
	adapter     string
	model       string
	fsync       bool

	journal *store.Journal // the file, made on the first Put

	mu      sync.Mutex
	details map[string]record
}

type record struct {
	EntryID string         `json:"entryId"`
	Adapter string         `json:"adapter"`
	Model   string         `json:"model"`
	Details jsontext.Value `json:"details"`
}

// Open loads the details kept beside the session at sessionPath. Nothing
// is created until the first Put. A torn last line (a crash mid-write) is
// ignored, and cut off before the next append; other unreadable lines are
// skipped, costing only the details they held.
func Open(sessionPath, adapter, model string, fsync bool) (*Store, error) {
	s := &Store{sessionPath: sessionPath, adapter: adapter, model: model, fsync: fsync, details: make(map[string]record),
		journal: store.NewJournal(sessionPath, FileName, fsync)}
	data, err := store.ReadSidecarFile(sessionPath, FileName)
	if err != nil {
		return nil, fmt.Errorf("reasoning details: %w", err)
	}
	s.load(data)
	return s, nil
}

func (s *Store) load(data []byte) {
	for len(data) > 0 {
		line, rest, complete := bytes.Cut(data, []byte("\n"))
		data = rest
		if !complete {
			break // torn tail: uncommitted
		}
		var r record
		if json.Unmarshal(line, &r) != nil || r.EntryID == "" || r.Details.Kind() != '[' {
			continue
		}
		s.details[r.EntryID] = r
	}
}

// Put records the details of the assistant entry entryID; it returns once
// they are written (and synced under fsync).
func (s *Store) Put(entryID string, details jsontext.Value) error {
	if len(details) == 0 {
		return nil
	}
	if !details.IsValid() || details.Kind() != '[' {
		return errors.New("reasoning details are not a JSON array")
	}
	line, err := json.Marshal(struct {
		EntryID string `json:"entryId"`
		Adapter string `json:"adapter"`
		Model   string `json:"model"`
	}{entryID, s.adapter, s.model})
	if err != nil {
		return err
	}
	// The details go in raw: an encoder would normalize them.
	line = append(append(append(line[:len(line)-1], `,"details":`...), details...), "}\n"...)

	if err := s.journal.Append(line); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.details[entryID] = record{EntryID: entryID, Adapter: s.adapter, Model: s.model, Details: bytes.Clone(details)}
	return nil
}

// Details returns the details of entryID when this store's adapter and
// model produced them, else nil.
func (s *Store) Details(entryID string) jsontext.Value {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.details[entryID]
	if !ok || r.Adapter != s.adapter || r.Model != s.model {
		return nil
	}
	return r.Details
}

// Close closes the file.
func (s *Store) Close() error { return s.journal.Close() }

// Inherit copies to the session at dstPath the details kept beside the
// session at srcPath for the assistant entries keep accepts, line for
// line, so a fork sends back the details of the turns it shares with its
// source. It writes nothing when there is nothing to copy.
func Inherit(srcPath, dstPath string, keep func(entryID string) bool) error {
	src, err := Open(srcPath, "", "", false)
	if err != nil {
		return err
	}
	var out []byte
	for id, r := range src.details {
		if !keep(id) {
			continue
		}
		line, err := json.Marshal(struct {
			EntryID string `json:"entryId"`
			Adapter string `json:"adapter"`
			Model   string `json:"model"`
		}{r.EntryID, r.Adapter, r.Model})
		if err != nil {
			return err
		}
		out = append(append(append(out, line[:len(line)-1]...), `,"details":`...), r.Details...)
		out = append(out, "}\n"...)
	}
	if len(out) == 0 {
		return nil
	}
	if err := store.CreateSidecarFile(dstPath, FileName, out); err != nil {
		return fmt.Errorf("reasoning details: %w", err)
	}
	return nil
}
