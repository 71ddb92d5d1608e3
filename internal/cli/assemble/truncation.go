package assemble

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/tiny-agent/tiny-go/internal/checkpoint"
	"github.com/tiny-agent/tiny-go/internal/store"
)

// checkNotTruncated refuses to resume a session whose checkpoint index
// (written between a tool call's durable intent and its effect) names a
// tool call the session file does not contain: lines were cut off the end
// of the file, and resuming would run that effect again. The integrity
// records catch a cut on their own; this holds when they are gone too.
// Only the newest such record is looked up: the file loses a suffix, so
// if it holds the newest call it holds every earlier one.
func CheckNotTruncated(st *store.Store) error {
	sessionPath := st.Path()
	data, err := store.ReadSidecarFile(sessionPath, checkpoint.IndexFile)
	if err != nil || data == nil {
		return err
	}
	recs, err := checkpoint.ReadIndex(bytes.NewReader(data))
	if err != nil {
		return nil // an unreadable index only costs its rewinds
	}
	last := ""
	for _, r := range recs {
		if r.ToolStartedID != "" && !strings.HasPrefix(r.ToolStartedID, userShellKey) { // a !command has no fact
			last = r.ToolStartedID
		}
	}
	if last == "" {
		return nil
	}
	// The reduced state knows every fact id: the file is not read again.
	if st.HasToolStarted(last) {
		return nil
	}
	return fmt.Errorf("session %s was truncated: its checkpoint index records tool call %s, which the session file no longer contains; refusing to resume, which could run that call's effect again (start a new session, or `tiny-go session fork` this one)", sessionPath, last)
}
