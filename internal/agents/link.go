package agents

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

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
	dir, err := store.SidecarDir(parentPath, true)
	if err != nil {
		return err
	}
	line, err := json.Marshal(l)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(dir, childrenFile), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("record the subagent's session: %w", err)
	}
	_, err = f.Write(append(line, '\n'))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("record the subagent's session: %w", err)
	}
	return nil
}

// Children are the links of a parent session, in the order they were
// made. A torn last line (a crash while appending) is skipped: its child
// never started.
func Children(parentPath string) ([]Link, error) {
	dir, err := store.SidecarDir(parentPath, false)
	if err != nil || dir == "" {
		return nil, err
	}
	f, err := os.Open(filepath.Join(dir, childrenFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Link
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var l Link
		if json.Unmarshal(sc.Bytes(), &l) == nil && l.Child != "" && l.ToolStartedID != "" {
			out = append(out, l)
		}
	}
	return out, sc.Err()
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
	dir, err := store.SidecarDir(childPath, true)
	if err != nil {
		return err
	}
	b, err := json.Marshal(l)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, parentFile), b, 0o600)
}

// ParentOf is the link of a child session; ok is false for a session
// that is no subagent's.
func ParentOf(sessionPath string) (Link, bool) {
	dir, err := store.SidecarDir(sessionPath, false)
	if err != nil || dir == "" {
		return Link{}, false
	}
	b, err := os.ReadFile(filepath.Join(dir, parentFile))
	if err != nil {
		return Link{}, false
	}
	var l Link
	if json.Unmarshal(b, &l) != nil || l.Parent == "" {
		return Link{}, false
	}
	return l, true
}
