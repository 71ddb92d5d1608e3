package undowire

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/checkpoint"
	"github.com/tiny-agent/tiny-go/internal/store"
	"github.com/tiny-agent/tiny-go/internal/tools"
)

// userShellKey prefixes the index key of a !command's checkpoint (it has
// no toolStarted fact).
const userShellKey = "shell:"

// RunUserShell runs a !command like a bash call of the model: with its
// checkpoint (before is the agent's BeforeEffect, nil when off), so as a
// transaction where commands are (a rewind puts back what it changed, and
// names it), keyed "shell:<id>" in the index.
func RunUserShell(ctx context.Context, before agent.BeforeEffect, shell tools.Tool, id string, args jsontext.Value) tools.Result {
	key := userShellKey + id
	after := func() {}
	if before != nil {
		if f := before(ctx, key, "bash", args); f != nil {
			after = f
		}
	}
	res := shell.Run(tools.WithStartedID(ctx, key), args)
	after()
	return res
}

// CheckNotTruncated refuses to resume a session whose checkpoint index
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
