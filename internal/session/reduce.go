package session

import (
	"bytes"
	"hash"
)

// Reduce reduces a whole session file (session.md §5). It is pure: no I/O,
// no knowledge of the current tools or configuration. Bytes after the
// final LF are an uncommitted torn tail and are ignored; RepairedLength is
// the length through that LF. On corruption the state is nil.
func Reduce(data []byte) (*State, *Corruption) {
	r, c := NewReducerFromFile(data)
	if c != nil {
		return nil, c
	}
	return r.State(), nil
}

// Reducer holds the reduced state of one session and applies transactions
// to it incrementally: the cost of a transaction depends on its own size,
// not on the length of the session (a compaction also costs the size of
// the active context it rewrites). It is not safe for concurrent use; the
// store serializes commits.
type Reducer struct {
	st State // live state; State returns copies

	// Backing arrays of the state's slices, which are handed out capped
	// (len == cap) so that a caller's append can never write into them.
	transcript []Message
	histIDs    []string  // the entry id of each transcript message
	hist       hash.Hash // SourceDigest's hash over histIDs[:histHashed], open-ended
	histHashed int
	histBuf    []byte // hashHistory's scratch
	active     []Message
	activeIDs  []string
	activeFrom int        // while loading, Transcript[activeFrom:] ends the active context
	contents   stringSlab // backs the messages' content pointers

	ids  idTable       // every id a fact minted, and what it names
	tx   txLog         // undo log of the transaction being applied
	dec  txDecoder     // reused by ApplyLine
	snap snapshotCache // last verified configuration digest

	lines int // committed lines so far, the header included

	// loading is true while NewReducerFromFile applies the file's lines.
	// A corrupt line then discards the whole reducer and no State
	// snapshot exists yet, so a transaction never needs undoing and the
	// operation's parts need no copy-on-write between transactions.
	loading bool
	// release is ReadHooks.ReleaseCompacted: while loading, a compaction
	// drops the text of the messages it summarized (Transcript[:released]).
	// needText reports the corruption that ended the load was only a
	// retained message whose text was dropped.
	release  bool
	released int
	needText bool
	names    map[string]string // tool names of released calls, copied once
}

// NewReducer starts the state of a new session whose file holds just the
// header line EncodeHeader(h).
func NewReducer(h Header) *Reducer {
	return newReducer(h, 0)
}

// newReducer sizes the reducer for about facts facts.
func newReducer(h Header, facts int) *Reducer {
	r := &Reducer{
		ids:        newIDTable(facts * 2),
		transcript: make([]Message, 0, facts),
		histIDs:    make([]string, 0, facts),
		active:     []Message{},
		activeIDs:  []string{},
		lines:      1,
	}
	r.dec.enableCache()
	r.st.Header = h
	r.st.RepairedLength = int64(len(EncodeHeader(h)))
	r.publish()
	return r
}

// NewReducerFromFile reduces a session file like Reduce and returns the
// reducer, so that the store can go on committing to it without reading
// the file again.
func NewReducerFromFile(data []byte) (*Reducer, *Corruption) {
	end := bytes.LastIndexByte(data, '\n')
	if end < 0 {
		return nil, &Corruption{Code: CorruptMissingHeader, Line: 1, Detail: "no complete header line"}
	}
	committed := data[:end+1]
	nl := bytes.IndexByte(committed, '\n')
	h, c := DecodeHeader(committed[:nl])
	if c != nil {
		return nil, c
	}
	// Sessions run at several hundred bytes per fact; guessing low only
	// costs some growth later.
	r := newReducer(h, len(committed)/1024)
	r.st.RepairedLength = int64(nl + 1)
	rest := committed[nl+1:]
	r.loading = true
	for len(rest) > 0 {
		nl := bytes.IndexByte(rest, '\n')
		if c := r.ApplyLine(rest[:nl], r.lines+1); c != nil {
			return nil, c
		}
		rest = rest[nl+1:]
	}
	r.finishLoad()
	return r, nil
}

// finishLoad ends loading: the active context gets the messages since the
// last compaction, and the state its history hash.
func (r *Reducer) finishLoad() {
	r.loading = false // the next transaction's begin makes nothing fresh
	r.active = append(r.active, r.transcript[r.activeFrom:]...)
	r.activeIDs = append(r.activeIDs, r.histIDs[r.activeFrom:]...)
	r.publish()
}

// ApplyLine decodes one committed transaction line (without its LF), which
// is line lineNo of the file, and applies it; RepairedLength grows by the
// line and its LF. On corruption nothing changes.
func (r *Reducer) ApplyLine(line []byte, lineNo int) *Corruption {
	_, c := r.applyLine(line, lineNo)
	return c
}

// applyLine is ApplyLine; it returns the line's facts, valid until the
// next line is decoded.
func (r *Reducer) applyLine(line []byte, lineNo int) ([]Fact, *Corruption) {
	r.dec.hist = r.histIDs
	tx, c := r.dec.decode(line)
	if c == nil {
		c = r.apply(tx, true)
	}
	if c != nil {
		c.Line = lineNo
		return nil, c
	}
	r.lines++
	r.st.RepairedLength += int64(len(line)) + 1
	r.publish()
	return tx, nil
}

// Check validates a candidate transaction against the current state
// without changing anything. The Corruption's Line is the line the
// transaction would occupy.
func (r *Reducer) Check(tx []Fact) *Corruption {
	c := r.apply(tx, false)
	if c != nil {
		c.Line = r.lines + 1
	}
	return c
}

// Apply validates tx like Check and, when it is valid, applies it
// atomically; on corruption nothing changes. The state keeps references
// to the facts' payloads (entries, records and their slices), so callers
// must not modify them afterwards. Apply does not know the committed
// line's length, so RepairedLength is left to the caller (the store tracks
// the file size itself); ApplyLine does track it.
func (r *Reducer) Apply(tx []Fact) *Corruption {
	c := r.apply(tx, true)
	if c != nil {
		c.Line = r.lines + 1
		return c
	}
	r.lines++
	r.publish()
	return nil
}

// State returns a snapshot of the current state. It is a shallow copy: its
// slices and Operation share memory with the reducer but are never
// modified afterwards (the reducer only appends past their length, or
// replaces them), so it stays valid and consistent after later
// transactions. Callers must not modify it; appending to its slices is
// safe (they are capped, so append copies).
func (r *Reducer) State() *State {
	s := r.st
	return &s
}

// publish points the state's slices at the backing arrays, capped.
func (r *Reducer) publish() {
	r.st.Transcript = r.transcript[:len(r.transcript):len(r.transcript)]
	r.st.TranscriptEntryIDs = r.histIDs[:len(r.histIDs):len(r.histIDs)]
	r.st.ActiveContext = r.active[:len(r.active):len(r.active)]
	r.st.ActiveEntryIDs = r.activeIDs[:len(r.activeIDs):len(r.activeIDs)]
	r.st.Released = r.released
	if !r.loading {
		r.publishHistory()
	}
}

// publishHistory gives the state a copy of the history hash when it moved
// (while loading, only at the end: a copy per compaction is waste).
func (r *Reducer) publishHistory() {
	if r.hist != nil && (r.st.histHash == nil || r.st.histHashed != r.histHashed) {
		r.st.histHash, r.st.histHashed = cloneHash(r.hist), r.histHashed
	}
}

// HasToolStarted reports whether id is the fact id of a toolStarted record
// of the session (a check that a record kept beside the session still
// names a line of it, without reading the file again).
func (r *Reducer) HasToolStarted(id string) bool {
	info, ok := r.ids.get(id)
	return ok && info.kind == idToolStarted
}
