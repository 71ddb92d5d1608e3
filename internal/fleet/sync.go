package fleet

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/tiny-agent/tiny-go/internal/session"
	"github.com/tiny-agent/tiny-go/internal/store"
)

// manifest points at the latest consistent pair in the blob store: a
// workspace (the task's base plus change sets) and the session prefix it
// goes with. It is written last, after the objects it names, so it never
// names a missing one.
type manifest struct {
	// Base is the commit the workspace started from when the task's
	// source did not fix one (a branch of a git URL moves).
	Base string `json:"base,omitzero"`
	// Changes are the hashes of the change sets (casKey), in order.
	Changes []string `json:"changes"`
	// Session is the key of the session prefix and SessionName its file
	// name under .tiny-agent/sessions ("" before the agent made one).
	Session     string `json:"session,omitzero"`
	SessionName string `json:"sessionName,omitzero"`
	// Bytes and Facts are the length of the prefix.
	Bytes int64 `json:"bytes"`
	Facts int64 `json:"facts"`
}

// syncer keeps a task's workspace and session durable in the blob store
// while the agent runs.
//
// The pair it uploads is always one a crash on this machine could have
// left: the session is cut so that every change in the snapshot has its
// intent (toolStarted) in the session, and every tool result in the
// session has its effect in the snapshot. The snapshot is taken after the
// session is read; facts that were committed while it was taken are kept
// up to the first toolStarted among them (that tool may have run partly,
// or fully: recovery then settles it as interrupted, as after a local
// crash), never beyond, and short of the first result among them (its
// tool may have changed the workspace after the scan read it: the next
// snapshot, taken at once, ships the two). A retried attempt restores the
// pair and runs recovery: no effect inside the workspace happens twice.
type syncer struct {
	blobs  *Blobs
	cas    *contentStore
	prefix string // the task's folder in the store
	repo   string
	// ix is the workspace as the manifest's change sets leave it.
	ix *index
	// upper is the upper layer of the workspace's overlay ("" when it is
	// a copy of the base): only it is walked for changes.
	upper string

	man     manifest
	attempt int32 // in the keys, so that no attempt overwrites another's
	version int   // of the objects written, for unique keys
	// facts is the number of facts seen in the file so far; applied the
	// committed bytes decoded.
	reducer *session.Reducer
	applied int64
	lines   int
	// dirty: a tool settled since the last snapshot.
	dirty bool
	// scanned, in tests, runs between a snapshot's scan and its second
	// read of the session (the agent goes on meanwhile).
	scanned func()
	// Stats of the uploads, for the result and docs/fleet.md.
	uploads     int
	uploadBytes int64
	// progress is man.Facts for the activity's heartbeat goroutine.
	progress *atomic.Int64
}

// sessionPath is the agent's one session file in repo ("" when none yet).
func sessionPath(repo string) (string, error) {
	m, err := filepath.Glob(filepath.Join(repo, ".tiny-agent", "sessions", "*.jsonl"))
	if err != nil || len(m) == 0 {
		return "", err
	}
	if len(m) > 1 {
		return "", fmt.Errorf("%d sessions in %s; a task has one", len(m), repo)
	}
	return m[0], nil
}

// skipSession leaves the session files out of a workspace snapshot: the
// session travels as its own cut prefix. Its integrity records stay out
// too: they are the running session's, ahead of the cut prefix or behind
// it, and sealed with this machine's key; restore writes the prefix's.
// The rest of its sidecar (<session>.d/) is kept.
func skipSession(rel string) bool {
	if !strings.HasPrefix(rel, ".tiny-agent/sessions/") {
		return false
	}
	return strings.HasSuffix(rel, ".jsonl") || strings.HasSuffix(rel, ".d/"+store.IntegrityFile)
}

// committed is the session file through its last LF (a torn tail is not
// committed).
func committed(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return data[:bytes.LastIndexByte(data, '\n')+1], nil
}

// observe applies the committed lines beyond what was seen and notes
// whether a tool settled (its effect is then due in a snapshot).
func (s *syncer) observe(data []byte) error {
	for s.applied < int64(len(data)) {
		end := s.applied + int64(bytes.IndexByte(data[s.applied:], '\n'))
		line := data[s.applied:end]
		s.lines++
		if s.reducer == nil {
			h, c := session.DecodeHeader(line)
			if c != nil {
				return fmt.Errorf("session header: %s", c.Describe())
			}
			s.reducer = session.NewReducer(h)
		} else {
			facts, c := session.DecodeTransaction(line)
			if c == nil {
				c = s.reducer.Apply(facts)
			}
			if c != nil {
				return fmt.Errorf("session: %s", c.Describe())
			}
			for _, f := range facts {
				switch f.Entry.(type) {
				case *session.ToolResultEntry, *session.SyntheticEntry:
					s.dirty = true
				}
			}
		}
		s.applied = end + 1
	}
	return nil
}

// cut is the length of data to keep with a snapshot taken after the first
// from bytes were read: through the first transaction beyond from that
// starts a tool, and short of the first one that settles a tool (the tool
// may have started before the snapshot and ended after the scan read
// what it changed).
func cut(data []byte, from int) int {
	for i := from; i < len(data); {
		end := i + bytes.IndexByte(data[i:], '\n') + 1
		facts, c := session.DecodeTransaction(data[i : end-1])
		for _, f := range facts {
			if c != nil {
				break
			}
			switch f.Entry.(type) {
			case *session.ToolResultEntry, *session.SyntheticEntry:
				return i
			}
			if _, ok := f.Record.(*session.ToolStarted); ok {
				return end
			}
		}
		i = end
	}
	return len(data)
}

// baseline notes the workspace the agent starts from (the task's base,
// which every worker can lay out again, so nothing of it is uploaded)
// and writes the first manifest; base is its commit ("" if fixed by the
// task).
func (s *syncer) baseline(ctx context.Context, base string) error {
	ix, err := s.index()
	if err != nil {
		return fmt.Errorf("workspace %s: %w", s.repo, err)
	}
	s.ix = ix
	s.man.Base = base
	return s.upload(ctx, "", nil, nil)
}

// index is the workspace as it is now: of an overlay, its upper layer
// (nothing uploaded: it is the base and the change sets applied), else
// the stat of every path.
func (s *syncer) index() (*index, error) {
	if s.upper == "" {
		return walkIndex(s.repo, skipShipped)
	}
	_, ix, err := (&index{entries: map[string]indexEntry{}, upper: s.upper}).scan(s.repo, skipShipped, func(string, []byte) error { return nil })
	return ix, err
}

// step uploads what the agent committed since the last call: the session
// prefix alone while no tool settled, else the change set with it. What a
// snapshot left out (a result that settled while it was taken) goes at
// once, in another snapshot, not at the next tool's result.
func (s *syncer) step(ctx context.Context) error {
	for range 3 {
		again, err := s.stepOnce(ctx)
		if err != nil || !again {
			return err
		}
	}
	return nil
}

// stepOnce is one pass of step; again says a snapshot left facts out.
func (s *syncer) stepOnce(ctx context.Context) (again bool, err error) {
	path, err := sessionPath(s.repo)
	if err != nil || path == "" {
		return false, err
	}
	data, err := committed(path)
	if err != nil {
		return false, err
	}
	if int64(len(data)) == s.man.Bytes && !s.dirty {
		return false, nil
	}
	if err := s.observe(data); err != nil {
		return false, err
	}
	if !s.dirty {
		return false, s.upload(ctx, filepath.Base(path), data, s.man.Changes)
	}
	return s.snapshot(ctx, path, data)
}

// snapshot ships the workspace's change set, then reads the session again
// and keeps what is consistent with it (see syncer); left says it left
// facts out.
func (s *syncer) snapshot(ctx context.Context, path string, before []byte) (left bool, err error) {
	cs, next, err := s.ix.scan(s.repo, skipShipped, func(hash string, data []byte) error {
		s.uploads++
		s.uploadBytes += int64(len(data))
		return s.cas.put(ctx, hash, data)
	})
	if err != nil {
		return false, fmt.Errorf("workspace %s: %w", s.repo, err)
	}
	if s.scanned != nil {
		s.scanned()
	}
	after, err := committed(path)
	if err != nil {
		return false, err
	}
	data := after[:cut(after, len(before))]
	if err := s.observe(data); err != nil {
		return false, err
	}
	changes := s.man.Changes
	if len(cs.Changes) > 0 {
		b, _ := json.Marshal(cs)
		h := sha(b)
		if err := s.cas.put(ctx, h, b); err != nil {
			return false, err
		}
		s.uploads++
		s.uploadBytes += int64(len(b))
		changes = append(slices.Clip(changes), h)
	}
	if err := s.upload(ctx, filepath.Base(path), data, changes); err != nil {
		return false, err
	}
	s.ix, s.dirty = next, false
	return len(data) < len(after), nil
}

// upload writes the session prefix and then the manifest naming it and
// the change sets; the previous session prefix is deleted after.
func (s *syncer) upload(ctx context.Context, name string, data []byte, changes []string) error {
	old := s.man
	next := manifest{Base: old.Base, Changes: changes}
	if name != "." && name != "" {
		s.version++
		next.Session = fmt.Sprintf("%s/a%d-session-%04d.jsonl", s.prefix, s.attempt, s.version)
		next.SessionName = name
		next.Bytes = int64(len(data))
		if s.reducer != nil {
			next.Facts = s.reducer.State().Facts
		}
		if err := s.blobs.Put(ctx, next.Session, data); err != nil {
			return err
		}
		s.uploads++
		s.uploadBytes += int64(len(data))
	}
	b, _ := json.Marshal(next)
	if err := s.blobs.Put(ctx, s.prefix+"/manifest.json", b); err != nil {
		return err
	}
	s.uploads++
	s.man = next
	if s.progress != nil {
		s.progress.Store(next.Facts) // the activity's heartbeat reports it
	}
	if old.Session != "" && old.Session != next.Session {
		_ = s.blobs.Delete(ctx, old.Session)
	}
	return nil
}

// load reads the task's manifest; ok is false when the store holds
// nothing for the task yet.
func (s *syncer) load(ctx context.Context) (m manifest, ok bool, err error) {
	b, ok, err := s.blobs.Get(ctx, s.prefix+"/manifest.json")
	if err != nil || !ok {
		return m, false, err
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, false, fmt.Errorf("%s/manifest.json: %w", s.prefix, err)
	}
	return m, true, nil
}

// restore brings the pair of m into repo, where the task's base is laid
// out: its change sets in order, then the session prefix.
func (s *syncer) restore(ctx context.Context, m manifest) error {
	for _, h := range m.Changes {
		b, err := s.cas.get(ctx, h)
		if err != nil {
			return err
		}
		var cs changeSet
		if err := json.Unmarshal(b, &cs); err != nil {
			return fmt.Errorf("change set %s: %w", h, err)
		}
		if err := cs.apply(ctx, s.repo, s.cas.get); err != nil {
			return err
		}
	}
	ix, err := s.index()
	if err != nil {
		return fmt.Errorf("workspace %s: %w", s.repo, err)
	}
	s.ix = ix
	if m.Session != "" {
		data, ok, err := s.blobs.Get(ctx, m.Session)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("blob store: %s is missing", m.Session)
		}
		dir := filepath.Join(s.repo, ".tiny-agent", "sessions")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return err
		}
		path := filepath.Join(dir, m.SessionName)
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return err
		}
		// The integrity records as a crash right after the prefix's last
		// line leaves them, sealed with this machine's key: tiny-go
		// refuses a session whose records are missing (its mark says it
		// sealed some: UNSEALED) or sealed with another key.
		if err := store.SealRecords(path, data); err != nil {
			return fmt.Errorf("session %s: %w", m.SessionName, err)
		}
		if err := s.observe(data); err != nil {
			return err
		}
		s.dirty = false
	}
	s.man = m
	if s.progress != nil {
		s.progress.Store(m.Facts)
	}
	return nil
}
