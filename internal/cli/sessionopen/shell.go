package sessionopen

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/tiny-agent/tiny-go/internal/store"
)

// The shell escape. A !command is not a fact of its own (the session
// format has none for it): it is journalled beside the session in
// shellFile — "started" before it runs, "done" with its output after,
// "sent" once a prompt carrying it was accepted — and the next prompt's
// user entry carries the exchanges not yet sent, so the model sees them
// and the session holds them. A command interrupted by a crash is never
// run again: the next prompt says it was interrupted.
const ShellFile = "shell.jsonl"

// maxShellShare bounds the output one !command adds to the conversation.
const maxShellShare = 30_000

// ShellRecord is one line of the journal.
type ShellRecord struct {
	ID      string `json:"id"`
	State   string `json:"state"` // started, done, sent
	Command string `json:"command,omitempty"`
	Output  string `json:"output,omitempty"`
	Failed  bool   `json:"failed,omitempty"`
}

// AppendShell adds r to the journal beside the session at path.
func AppendShell(path string, r ShellRecord) error {
	b, _ := json.Marshal(r)
	j := store.NewJournal(path, ShellFile, true)
	defer j.Close()
	return j.Append(append(b, '\n'))
}

// PendingShell are the exchanges of the session at path not yet sent, as
// text for the next prompt, and their ids.
func PendingShell(path string) (string, []string) {
	data, _ := store.ReadSidecarFile(path, ShellFile)
	if len(data) == 0 {
		return "", nil
	}
	var order []string
	recs := map[string]*ShellRecord{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var r ShellRecord
		if json.Unmarshal(sc.Bytes(), &r) != nil || r.ID == "" {
			continue // a torn last line
		}
		switch prev := recs[r.ID]; {
		case r.State == "started" && prev == nil:
			order = append(order, r.ID)
			recs[r.ID] = &r
		case prev != nil && r.State == "done" && prev.State == "started":
			recs[r.ID] = &r
		case prev != nil && r.State == "sent":
			prev.State = "sent"
		}
	}
	var b strings.Builder
	var ids []string
	for _, id := range order {
		r := recs[id]
		if r.State == "sent" {
			continue
		}
		ids = append(ids, id)
		if r.State == "started" {
			fmt.Fprintf(&b, "I ran `%s` in the shell, but tiny-go stopped while it ran: its output is unknown and it was not run again.\n\n", r.Command)
			continue
		}
		out := r.Output
		if len(out) > maxShellShare {
			out = out[:maxShellShare] + "\n[output cut at 30000 bytes]"
		}
		fmt.Fprintf(&b, "I ran `%s` in the shell:\n```\n%s\n```\n\n", r.Command, strings.TrimRight(out, "\n"))
	}
	return b.String(), ids
}

// ShellJournalled reports whether !commands not yet sent wait beside the
// session at path: a session that holds only them is kept (and resumable),
// so their output still reaches the model.
func ShellJournalled(path string) bool {
	_, ids := PendingShell(path)
	return len(ids) > 0
}

// WithShell is prompt preceded by the shell exchanges not yet sent of the
// session at path; sent marks them sent once the prompt was accepted.
func WithShell(path, prompt string) (text string, sent func()) {
	pending, ids := PendingShell(path)
	if len(ids) == 0 {
		return prompt, func() {}
	}
	return pending + prompt, func() {
		for _, id := range ids {
			_ = AppendShell(path, ShellRecord{ID: id, State: "sent"})
		}
	}
}

// Empty reports whether st holds nothing to resume: no fact beyond its
// header and no !command waiting beside it.
func Empty(st *store.Store) bool {
	return st.State().Facts == 0 && !ShellJournalled(st.Path())
}

// EmptyCreated returns what removes st's file once the runner has moved
// off it, when this process created it (created) and it is Empty (as the
// runner's discardCreated does at exit).
func EmptyCreated(created bool, st *store.Store) func() {
	if !created || !Empty(st) {
		return func() {}
	}
	path := st.Path()
	return func() { _ = os.Remove(path) }
}
