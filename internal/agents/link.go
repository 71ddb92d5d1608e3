package agents

import (
	"bytes"
	"fmt"

	"github.com/go-json-experiment/json"

	"github.com/tiny-agent/tiny-go/internal/store"
)

// Link ties a child session to the task call of its parent. It is kept
// beside both sessions (the header of a session cannot change): in the
// parent's sidecar, children.jsonl, one line per child, written and
// synced before the child's session exists, so a continued call finds
// its child; in the child's, parent.json.
type Link struct {
	Parent        string `json:"parent"`
	ToolStartedID string `json:"toolStartedId"`
	Child         string `json:"session"`
	Agent         string `json:"agent"`
	Description   string `json:"description,omitempty"`
}

const (
	childrenFile = "children.jsonl"
	parentFile   = "parent.json"
)

// RecordChild appends l to the parent's children and syncs it.
func RecordChild(parentPath string, l Link) error {
	line, err := json.Marshal(l)
	if err != nil {
		return err
	}
	if err := store.NewJournal(parentPath, childrenFile, true).Append(append(line, '\n')); err != nil {
		return fmt.Errorf("record the subagent's session: %w", err)
	}
	return nil
}

// Children are the links of a parent session, in the order they were
// made. A torn last line (a crash while appending) is skipped: its child
// never started.
func Children(parentPath string) ([]Link, error) {
	b, err := store.ReadSidecarFile(parentPath, childrenFile)
	if err != nil {
		return nil, err
	}
	var out []Link
	for len(b) > 0 {
		line, rest, whole := bytes.Cut(b, []byte{'\n'})
		b = rest
		var l Link
		if whole && json.Unmarshal(line, &l) == nil && l.Child != "" && l.ToolStartedID != "" {
			out = append(out, l)
		}
	}
	return out, nil
}

// ChildOf is the link of the call whose toolStarted id is id.
func ChildOf(parentPath, id string) (Link, bool, error) {
	ls, err := Children(parentPath)
	for _, l := range ls {
		if l.ToolStartedID == id {
			return l, true, nil
		}
	}
	return Link{}, false, err
}

// WriteParent keeps l beside the child's session.
func WriteParent(childPath string, l Link) error {
	b, err := json.Marshal(l)
	if err != nil {
		return err
	}
	return store.ReplaceSidecarFile(childPath, parentFile, b)
}

// ParentOf is the link of a child session; ok is false for a session
// that is no subagent's.
func ParentOf(sessionPath string) (Link, bool) {
	b, err := store.ReadSidecarFile(sessionPath, parentFile)
	var l Link
	if err != nil || b == nil || json.Unmarshal(b, &l) != nil || l.Parent == "" {
		return Link{}, false
	}
	return l, true
}
