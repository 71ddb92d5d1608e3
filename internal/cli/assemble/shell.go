package assemble

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

type ShellRecord struct {
	ID      string `json:"id"`
	State   string `json:"state"` // started, done, sent
	Command string `json:"command,omitempty"`
	Output  string `json:"output,omitempty"`
	Failed  bool   `json:"failed,omitempty"`
}

func AppendShell(path string, r ShellRecord) error {
	b, _ := json.Marshal(r)
	j := store.NewJournal(path, ShellFile, true)
	defer j.Close()
	return j.Append(append(b, '\n'))
}

// pendingShell are the exchanges of the session at path not yet sent, as
// text for the next prompt, and their ids.
func pendingShell(path string) (string, []string) {
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

// withShell is prompt preceded by the shell exchanges not yet sent; sent
// marks them sent once the prompt was accepted.
func (a *Runner) WithShell(prompt string) (string, func()) {
	path := a.Store.Path()
	text, ids := pendingShell(path)
	if len(ids) == 0 {
		return prompt, func() {}
	}
	return text + prompt, func() {
		for _, id := range ids {
			_ = AppendShell(path, ShellRecord{ID: id, State: "sent"})
		}
	}
}

// emptyCreated returns what removes the current session's file once the
// runner has moved off it, when this process created it and it holds
// nothing but its header (as discardCreated does at exit).
func (a *Runner) EmptyCreated() func() {
	if !a.Created || a.Store.State().Facts > 0 || shellJournalled(a.Store.Path()) {
		return func() {}
	}
	path := a.Store.Path()
	return func() { _ = os.Remove(path) }
}
