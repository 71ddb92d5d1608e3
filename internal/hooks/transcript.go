package hooks

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/tiny-agent/tiny-go/internal/cctools"
	"github.com/tiny-agent/tiny-go/internal/session"
	"github.com/tiny-agent/tiny-go/internal/store"
)

// TranscriptFile is the session's conversation in Claude Code's transcript
// format, kept beside the session: what transcript_path names. It is
// derived from the session's facts (never a source of truth) and rewritten
// before a hook runs whenever the session grew, so hooks written for
// Claude Code's transcripts (a Stop hook reading the last answer, a
// logger copying the conversation) read what they expect.
const TranscriptFile = "transcript.jsonl"

// transcript keeps one session's derived transcript up to date. It reads
// only what the session gained since the last hook, reduces it onto the
// state it keeps, and appends the new messages: a hook's cost grows with
// the work done since the last one, not with the session.
type transcript struct {
	session string // the session file
	out     string // the derived transcript beside it
	size    int64  // the session's bytes applied (through its last full line)
	r       *session.Reducer
	lines   int     // the session's lines applied
	written int     // transcript messages in out
	parent  *string // the last line's uuid
	stamps  map[string]string
}

// Path brings the derived transcript up to date and returns its path.
func (t *transcript) Path(sessionID, cwd string) (string, error) {
	if t.out == "" {
		dir, err := store.SidecarDir(t.session, true)
		if err != nil {
			return "", fmt.Errorf("transcript: %w", err)
		}
		t.out = filepath.Join(dir, TranscriptFile)
	}
	// A hook of a session that did not grow reads nothing of it.
	if fi, err := os.Stat(t.session); err == nil && fi.Size() == t.size && t.r != nil {
		return t.out, nil
	}
	if err := t.catchUp(); err != nil {
		return t.out, fmt.Errorf("transcript: %w", err)
	}
	if t.r == nil {
		return t.out, nil // not even a header yet: no transcript
	}
	st := t.r.State()
	var b bytes.Buffer
	for i := t.written; i < len(st.Transcript); i++ {
		id := ""
		if i < len(st.TranscriptEntryIDs) {
			id = st.TranscriptEntryIDs[i]
		}
		if err := writeLine(&b, st.Transcript[i], id, t.stamps[id], &t.parent, sessionID, cwd); err != nil {
			return t.out, err
		}
	}
	first := t.written == 0
	t.written = len(st.Transcript)
	if first {
		return t.out, replaceFile(t.out, b.Bytes()) // a file of an earlier process goes
	}
	return t.out, appendFile(t.out, b.Bytes())
}

// catchUp applies the session's lines since the last call.
func (t *transcript) catchUp() error {
	f, err := os.Open(t.session)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := f.Seek(t.size, io.SeekStart); err != nil {
		return err
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return err
	}
	end := bytes.LastIndexByte(data, '\n')
	if end < 0 {
		return nil // nothing whole yet
	}
	data = data[:end+1]
	if t.stamps == nil {
		t.stamps = map[string]string{}
	}
	maps.Copy(t.stamps, entryTimes(data))
	if t.r == nil {
		r, c := session.NewReducerFromFile(data)
		if c != nil {
			return fmt.Errorf("the session does not read: %v", c)
		}
		t.r, t.lines = r, bytes.Count(data, []byte{'\n'})
	} else {
		for line := range bytes.Lines(data) {
			if c := t.r.ApplyLine(bytes.TrimSuffix(line, []byte{'\n'}), t.lines+1); c != nil {
				return fmt.Errorf("the session does not read: %v", c)
			}
			t.lines++
		}
	}
	t.size += int64(len(data))
	return nil
}

// appendFile adds data to the end of path.
func appendFile(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// replaceFile writes data to path through a temporary file, so a hook
// reading it never sees half of it.
func replaceFile(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".transcript-*.tmp")
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return err
	}
	if err := os.Chmod(f.Name(), 0o600); err != nil {
		os.Remove(f.Name())
		return err
	}
	return os.Rename(f.Name(), path)
}

// ccLine is one line of Claude Code's transcript.
type ccLine struct {
	ParentUUID  *string   `json:"parentUuid"`
	IsSidechain bool      `json:"isSidechain"`
	UserType    string    `json:"userType"`
	Cwd         string    `json:"cwd"`
	SessionID   string    `json:"sessionId"`
	Version     string    `json:"version"`
	Type        string    `json:"type"`
	Message     ccMessage `json:"message"`
	UUID        string    `json:"uuid"`
	Timestamp   string    `json:"timestamp"`
}

type ccMessage struct {
	Role    string `json:"role"`
	Content any    `json:"content"`
}

// ClaudeTranscript turns the facts of a session file into Claude Code's
// transcript lines: the prompt as a user line with string content, each
// assistant reply with its text and tool_use blocks (Claude Code's names
// and inputs), each result as a user line with a tool_result block.
func ClaudeTranscript(facts []byte, sessionID, cwd string) ([]byte, error) {
	st, corrupt := session.Reduce(facts)
	if corrupt != nil {
		return nil, fmt.Errorf("transcript: the session does not read: %v", corrupt)
	}
	stamps := entryTimes(facts)
	var out bytes.Buffer
	var parent *string
	for i, m := range st.Transcript {
		id := ""
		if i < len(st.TranscriptEntryIDs) {
			id = st.TranscriptEntryIDs[i]
		}
		if err := writeLine(&out, m, id, stamps[id], &parent, sessionID, cwd); err != nil {
			return nil, err
		}
	}
	return out.Bytes(), nil
}

// writeLine writes message m (entry id, at stamp) as one transcript line
// after *parent, and makes it the parent of the next.
func writeLine(out *bytes.Buffer, m session.Message, id, stamp string, parent **string, sessionID, cwd string) error {
	line := ccLine{ParentUUID: *parent, UserType: "external", Cwd: cwd, SessionID: sessionID,
		Version: "tiny-go", UUID: id, Timestamp: stamp}
	line.Type, line.Message = ccMessageOf(m, cwd)
	b, err := json.Marshal(line, json.Deterministic(true))
	if err != nil {
		return fmt.Errorf("transcript: %w", err)
	}
	out.Write(b)
	out.WriteByte('\n')
	*parent = &line.UUID
	return nil
}

func ccMessageOf(m session.Message, cwd string) (string, ccMessage) {
	text := ""
	if m.Content != nil {
		text = *m.Content
	}
	switch m.Role {
	case session.RoleAssistant:
		blocks := []any{}
		if text != "" {
			blocks = append(blocks, map[string]any{"type": "text", "text": text})
		}
		for _, c := range m.ToolCalls {
			call := cctools.ToClaude(c.Function.Name, jsontext.Value(c.Function.Arguments), cwd)
			var input any = map[string]any{}
			if json.Unmarshal(call.Input, &input) != nil {
				input = map[string]any{}
			}
			blocks = append(blocks, map[string]any{"type": "tool_use", "id": c.ID, "name": call.Name, "input": input})
		}
		return "assistant", ccMessage{Role: "assistant", Content: blocks}
	case session.RoleTool:
		return "user", ccMessage{Role: "user", Content: []any{map[string]any{"type": "tool_result", "tool_use_id": m.ToolCallID, "content": text}}}
	}
	return "user", ccMessage{Role: "user", Content: text}
}

// entryTimes are the entries' timestamps (RFC 3339, milliseconds, UTC as
// Claude Code writes them), by entry id.
func entryTimes(facts []byte) map[string]string {
	type fact struct {
		Kind      string `json:"kind"`
		ID        string `json:"id"`
		Timestamp int64  `json:"timestamp"`
	}
	out := map[string]string{}
	add := func(f fact) {
		if f.Kind == "entry" {
			out[f.ID] = time.UnixMilli(f.Timestamp).UTC().Format("2006-01-02T15:04:05.000Z")
		}
	}
	for _, line := range bytes.Split(facts, []byte("\n")) {
		line = bytes.TrimSpace(line)
		switch {
		case len(line) == 0:
		case line[0] == '[':
			var batch []fact
			if json.Unmarshal(line, &batch, json.RejectUnknownMembers(false)) == nil {
				for _, f := range batch {
					add(f)
				}
			}
		default:
			var f fact
			if json.Unmarshal(line, &f, json.RejectUnknownMembers(false)) == nil {
				add(f)
			}
		}
	}
	return out
}
