package hooks

import (
	"bytes"
	"fmt"
	"sync"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/tiny-agent/tiny-go/internal/store"
)

// LogFile is the file beside a session (in its store.SidecarDir) that
// keeps what hooks decided and did, one JSON line each, synced before it
// matters:
//
//	{"pre":"<call>","decision":"deny","reason":"...","input":{...}}
//	{"post":"<call>","state":"started"}
//	{"post":"<call>","state":"done"}
//	{"context":"<entry id>","text":"..."}
//	{"context":"next-prompt","text":"..."}   SessionStart's, until a prompt takes it
//	{"context":"next-prompt"}                taken
//
// A call is named by its assistant entry id and tool call id. A pre line
// is durable before the call's toolStarted (so a resume uses it instead
// of asking the hooks again, and runs the same input); a post "started"
// line before its hooks run (so a resume reports them instead of running
// them again); a context line before the entry (or the next request) it
// belongs to. A torn last line is ignored.
const LogFile = "hooks.jsonl"

type record struct {
	Pre      string         `json:"pre,omitzero"`
	Decision string         `json:"decision,omitzero"`
	Reason   string         `json:"reason,omitzero"`
	Input    jsontext.Value `json:"input,omitzero"`
	Post     string         `json:"post,omitzero"`
	State    string         `json:"state,omitzero"`
	Context  string         `json:"context,omitzero"`
	Text     string         `json:"text,omitzero"`
}

// Log is the hooks sidecar of one session.
type Log struct {
	mu      sync.Mutex
	path    string         // the session file
	journal *store.Journal // the file beside it, made on the first record
	pre     map[string]record
	post    map[string]string // call -> started | done
	context map[string]string
}

// OpenLog reads the hooks sidecar of the session at sessionPath (none
// yet is empty); the file is created with the first record.
func OpenLog(sessionPath string) (*Log, error) {
	l := &Log{path: sessionPath, journal: store.NewJournal(sessionPath, LogFile, true),
		pre: map[string]record{}, post: map[string]string{}, context: map[string]string{}}
	data, err := store.ReadSidecarFile(sessionPath, LogFile)
	if err != nil {
		return nil, fmt.Errorf("hooks record: %w", err)
	}
	l.load(data)
	return l, nil
}

// load applies the records of data; a torn last line and lines that do
// not parse are skipped.
func (l *Log) load(data []byte) {
	for len(data) > 0 {
		line, rest, complete := bytes.Cut(data, []byte("\n"))
		data = rest
		if !complete {
			break // torn tail: what it said never mattered
		}
		var r record
		if json.Unmarshal(line, &r) != nil {
			continue
		}
		l.apply(r)
	}
}

func (l *Log) apply(r record) {
	switch {
	case r.Pre != "":
		l.pre[r.Pre] = r
	case r.Post != "":
		l.post[r.Post] = r.State
	case r.Context != "" && r.Text == "":
		delete(l.context, r.Context) // taken: a pending context went with a prompt
	case r.Context != "":
		if prev := l.context[r.Context]; prev != "" {
			r.Text = prev + "\n\n" + r.Text
		}
		l.context[r.Context] = r.Text
	}
}

// Pre is the recorded PreToolUse decision of call.
func (l *Log) Pre(call string) (decision, reason string, input jsontext.Value, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r, ok := l.pre[call]
	return r.Decision, r.Reason, r.Input, ok
}

// PostState is "started", "done" or "" for call's PostToolUse hooks.
func (l *Log) PostState(call string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.post[call]
}

// Interrupted lists the calls whose PostToolUse hooks started and never
// finished (a crash).
func (l *Log) Interrupted() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for call, st := range l.post {
		if st == "started" {
			out = append(out, call)
		}
	}
	return out
}

// Context is what hooks added at entryID.
func (l *Log) Context(entryID string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.context[entryID]
}

// add appends r, synced, and applies it.
func (l *Log) add(r record) error {
	line, err := json.Marshal(r)
	if err != nil {
		return err
	}
	line = append(line, '\n')
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.journal.Append(line); err != nil {
		return err
	}
	l.apply(r)
	return nil
}

// Close closes the file, if one was opened.
func (l *Log) Close() error { return l.journal.Close() }
