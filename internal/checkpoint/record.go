package checkpoint

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"golang.org/x/sys/unix"
)

// File is the recorded state of one path.
type File struct {
	// Path is slash-separated and relative to the working directory, or
	// absolute for a file outside it.
	Path   string `json:"path"`
	Absent bool   `json:"absent,omitempty"`
	// Hash names the content (sha256:... or git:...); for a symlink the
	// content is its target.
	Hash string `json:"hash,omitempty"`
	Mode uint32 `json:"mode,omitempty"` // permission bits
	Link bool   `json:"link,omitempty"`
	// Dir is a directory (recorded by command transactions: empty
	// directories and directory modes come back too).
	Dir bool `json:"dir,omitempty"`
	// Missing says why the content was not kept ("larger than 64.0 MiB",
	// "unreadable: permission denied"); Hash is then empty.
	Missing string `json:"missing,omitempty"`
	// Special is a FIFO or socket ("fifo", "socket"): it has no content
	// (never opened) and a rewind makes it again with mknod.
	Special string `json:"special,omitempty"`
	// MTime is the modification time (Unix nanoseconds) a rewind gives a
	// file back; 0: not recorded.
	MTime int64 `json:"mtime,omitempty"`
	// Patch, for a file too big to read whole that a journaled command
	// appended to or wrote in place, addresses its earlier content as the
	// way back from the file the command left (tx_patch.go); Hash is
	// then empty.
	Patch string `json:"patch,omitempty"`
}

// Phases of a record: the state before an effect and after it.
const (
	PhaseBefore = "before"
	PhaseAfter  = "after"
)

// Record is one line of a session's checkpoints.jsonl: a snapshot taken
// before or after one effect. A tree record covers every path of the
// working directory (a path not in the tree was absent); a files record
// covers only the paths it lists.
type Record struct {
	// ToolStartedID keys the checkpoint to the durable intent of a tool
	// call; Rewind instead names the rewind that made the change.
	ToolStartedID string `json:"toolStartedId,omitempty"`
	Rewind        string `json:"rewind,omitempty"`
	Tool          string `json:"tool,omitempty"`
	Phase         string `json:"phase"`
	At            int64  `json:"at"` // ms
	// Tree is "git:<tree oid>" or "plain:<manifest hash>".
	Tree  string `json:"tree,omitempty"`
	Files []File `json:"files,omitempty"`
	// Tx names the transaction a command ran as (tx.go): its states are
	// beside it in the store, not in the record.
	Tx string `json:"tx,omitempty"`
	// Missing says why no snapshot could be taken; the record then
	// covers nothing.
	Missing string `json:"missing,omitempty"`
	Bytes   int64  `json:"bytes,omitempty"` // bytes this record added to the store
	// Git names the blob of the repository's state (HEAD, refs, stash
	// list, index; gitstate.go) of a tree record in a git work tree.
	Git string `json:"git,omitempty"`
	// All says the tree covers git-ignored files too.
	All bool `json:"all,omitempty"`
	// Beyond names, in a before record, what the effect may do that no
	// rewind can undo, one line per kind (beyond.go).
	Beyond []string `json:"beyond,omitempty"`
}

// Key is what pairs a before record with its after record.
func (r Record) Key() string {
	if r.Rewind != "" {
		return "rewind:" + r.Rewind
	}
	return r.ToolStartedID
}

// IndexFile is the name of a session's checkpoint index in its sidecar
// directory.
const IndexFile = "checkpoints.jsonl"

// ReadIndex parses a checkpoint index. A torn last line (no LF: the
// process died while appending) is ignored; any other bad line is an
// error. What tiny-go did not seal is refused (ReadIndexChecked).
func ReadIndex(r io.Reader) ([]Record, error) {
	recs, _, err := ReadIndexChecked(r)
	return recs, err
}

// ReadIndexChecked is ReadIndex with one line for each record refused
// for its seal (index_seal.go).
func ReadIndexChecked(r io.Reader) ([]Record, []string, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, nil, err
	}
	if i := bytes.LastIndexByte(data, '\n'); i+1 < len(data) {
		data = data[:i+1]
	}
	var out []Record
	var refused []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), 64<<20)
	for n := 1; sc.Scan(); n++ {
		line, seal, err := openIndexLine(sc.Bytes())
		if err != nil {
			return nil, nil, err
		}
		if seal == sealForged {
			refused = append(refused, fmt.Sprintf("checkpoint index line %d: its seal does not match (not written by tiny-go, or changed since): left out", n))
			continue
		}
		var rec Record
		if err := json.Unmarshal(line, &rec); err != nil {
			return nil, nil, fmt.Errorf("checkpoint index line %d: %w", n, err)
		}
		rec, why := checkIndexRecord(rec, seal == sealOK)
		if why != "" {
			refused = append(refused, fmt.Sprintf("checkpoint index line %d %s", n, why))
		}
		out = append(out, rec)
	}
	return out, refused, sc.Err()
}

// ReadIndexFile reads an index by path; a missing file is an empty index.
func ReadIndexFile(path string) ([]Record, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadIndex(f)
}

// AppendRecords appends records to an index file as whole lines in one
// write.
func AppendRecords(w io.Writer, recs ...Record) error {
	var buf bytes.Buffer
	for _, r := range recs {
		line, err := json.Marshal(r)
		if err == nil {
			line, err = sealIndexLine(line)
		}
		if err != nil {
			return err
		}
		buf.Write(line)
		buf.WriteByte('\n')
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// Snapshot takes a tree snapshot of the working directory. A snapshot that
// cannot be taken is returned as a record with Missing set, never as an
// error: the effect still runs, and the rewind says what it cannot undo.
func (s *Store) Snapshot(ctx context.Context) Record {
	s.startLazy()
	if s.tr != nil {
		// The baseline is taken in the background: an effect waits for
		// it rather than run unprotected.
		select {
		case <-s.tr.ready:
		case <-ctx.Done():
			return Record{Missing: "interrupted before the first checkpoint was taken"}
		}
	}
	unlock, err := s.lock()
	if err != nil {
		return Record{Missing: "checkpoint store unavailable: " + rootCause(err)}
	}
	defer unlock()
	if s.tr != nil {
		if rec, ok := s.trackedSnapshot(ctx); ok {
			return rec
		}
	}
	return s.fullSnapshotLocked(ctx)
}

// fullSnapshotLocked looks at the whole working directory. The caller
// holds the store lock.
func (s *Store) fullSnapshotLocked(ctx context.Context) Record {
	if s.git != nil {
		objects := filepath.Join(s.root, "git", "objects")
		before := s.gitSizer.size(objects)
		oid, unreadable, err := s.git.snapshot(ctx, s.opts.MaxFileSize)
		if err != nil {
			return Record{Missing: "git snapshot failed: " + err.Error()}
		}
		rec := Record{Tree: schemeGit + oid, Files: unreadable, Bytes: max(0, s.gitSizer.size(objects)-before)}
		s.accountLocked(rec.Bytes)
		return s.withIgnoredLocked(ctx, rec) // ignored.go
	}
	h, added, err := s.plainSnapshot(ctx)
	s.accountLocked(added)
	if err != nil {
		return Record{Missing: rootCause(err), Bytes: added}
	}
	return Record{Tree: "plain:" + h, Bytes: added}
}

// SnapshotFiles records the current state of the given paths (relative to
// the working directory or absolute), storing their content.
func (s *Store) SnapshotFiles(paths ...string) Record {
	var rec Record
	unlock, err := s.lock()
	if err != nil {
		for _, p := range paths {
			rec.Files = append(rec.Files, File{Path: p, Missing: "checkpoint store unavailable: " + rootCause(err)})
		}
		return rec
	}
	defer unlock()
	for _, p := range paths {
		f, data, err := s.stat(p)
		if f.Dir {
			f.Dir, f.Missing = false, "a directory"
		}
		if err == nil && !f.Absent && f.Missing == "" {
			h, n, perr := s.putBlob(data)
			if perr != nil {
				f.Missing = "not stored: " + rootCause(perr)
			}
			f.Hash = h
			rec.Bytes += n
		}
		rec.Files = append(rec.Files, f)
	}
	s.accountLocked(rec.Bytes)
	return rec
}

// stat reads the current state of path (relative or absolute) with its
// content. Absent, oversized or unreadable files come back as such, not as
// errors.
func (s *Store) stat(path string) (File, []byte, error) {
	f := File{Path: path}
	abs := s.Abs(path)
	fi, err := os.Lstat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, unix.ENOTDIR):
		f.Absent = true
		return f, nil, nil
	case err != nil:
		f.Missing = "unreadable: " + rootCause(err)
		return f, nil, nil
	}
	f.Mode = uint32(fi.Mode().Perm())
	var data []byte
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		f.Link = true
		t, rerr := os.Readlink(abs)
		data, err = []byte(t), rerr
	case fi.IsDir():
		f.Dir = true
		return f, nil, nil
	case specialKind(fi.Mode()) != "":
		f.Special, f.MTime = specialKind(fi.Mode()), fi.ModTime().UnixNano()
		return f, nil, nil
	case !fi.Mode().IsRegular():
		f.Missing = "a device, not a regular file"
		return f, nil, nil
	case fi.Size() > s.opts.MaxFileSize:
		err = errTooLarge
	default:
		f.MTime = fi.ModTime().UnixNano()
		data, err = readCapped(abs, s.opts.MaxFileSize)
	}
	switch {
	case errors.Is(err, errTooLarge):
		f.Missing = "larger than " + formatBytes(s.opts.MaxFileSize)
	case err != nil:
		f.Missing = "unreadable: " + rootCause(err)
	}
	return f, data, nil
}

// specialKind names the special files a rewind can make again (their
// content is nothing but their kind and mode): "" for any other.
func specialKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "fifo"
	case m&fs.ModeSocket != 0:
		return "socket"
	}
	return ""
}

// Abs is the absolute path of a recorded path.
func (s *Store) Abs(path string) string {
	if filepath.IsAbs(path) {
		return path
	}
	return filepath.Join(s.cwd, filepath.FromSlash(path))
}

// Rel is how a path is recorded: relative to the working directory when
// inside it, absolute otherwise.
func (s *Store) Rel(path string) string {
	abs := path
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(s.cwd, abs)
	}
	abs = filepath.Clean(abs)
	if rel, err := filepath.Rel(s.cwd, abs); err == nil && rel != "." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && rel != ".." {
		return filepath.ToSlash(rel)
	}
	return abs
}

// Recorder writes the checkpoints of one session: a before record when an
// effect is about to start and an after record when it ended.
type Recorder struct {
	store *Store
	tx    *txMode // nil: commands are snapshotted (tx_recorder.go)
	mu    sync.Mutex
	index io.Writer // the session's checkpoints.jsonl, opened for append
	now   func() time.Time
	kept  map[string][2]Record // the last effects' records, for Changed
	// keptPaths are the paths the last transactions changed, for Changed.
	keptPaths map[string][]string
}

// NewRecorder records into index (opened O_APPEND).
func NewRecorder(store *Store, index io.Writer) *Recorder {
	return &Recorder{store: store, index: index, now: time.Now}
}

// Store is the recorder's store.
func (r *Recorder) Store() *Store { return r.store }

// BeforeEffect takes the checkpoint of one tool call whose toolStarted
// fact (toolStartedID) is durable and whose effect is about to start; the
// returned func records the state after the effect and must be called when
// it ended. The built-in read changes nothing and gets no checkpoint;
// write and edit record their target file; every other tool (bash, bg,
// MCP tools) a snapshot of the working directory.
func (r *Recorder) BeforeEffect(ctx context.Context, toolStartedID, tool string, args jsontext.Value) (after func()) {
	if tool == "read" {
		return func() {}
	}
	r.store.protect.Do(r.store.protectStateDir)
	if after, ok := r.beginTx(toolStartedID, tool, Beyond(r.store.Cwd(), tool, args)); ok {
		return after
	}
	take := func() Record { return r.store.Snapshot(ctx) }
	if tool == "write" || tool == "edit" {
		var a struct {
			Path string `json:"path"`
		}
		if err := json.Unmarshal(args, &a, json.RejectUnknownMembers(false)); err != nil || a.Path == "" {
			return func() {} // invalid arguments: the tool changes nothing
		}
		path := r.store.Rel(a.Path)
		if resolved, err := filepath.EvalSymlinks(r.store.Abs(path)); err == nil {
			path = r.store.Rel(resolved) // write and edit write through a symlink
		}
		take = func() Record { return r.store.SnapshotFiles(path) }
	}
	if tool != "write" && tool != "edit" {
		// A command may change the repository too (gitstate.go), and
		// what it does beyond the machine is named (beyond.go).
		tree := take
		var before *repoState
		first := true
		take = func() Record {
			rec := tree()
			st := r.store.recordGit(ctx, &rec)
			if first {
				before, first = st, false
				rec.Beyond = Beyond(r.store.Cwd(), tool, args)
			} else {
				r.store.keepDropped(ctx, before, st)
			}
			return rec
		}
	}
	before := take()
	r.append(before, toolStartedID, tool, PhaseBefore)
	return func() {
		// The after state is taken even when the call was cancelled:
		// whatever it changed must be known.
		ctx = context.WithoutCancel(ctx)
		after := take()
		r.append(after, toolStartedID, tool, PhaseAfter)
		r.keep(toolStartedID, before, after)
	}
}

func (r *Recorder) append(rec Record, id, tool, phase string) error {
	rec.ToolStartedID, rec.Tool, rec.Phase, rec.At = id, tool, phase, r.now().UnixMilli()
	r.mu.Lock()
	defer r.mu.Unlock()
	// A failed index write loses this checkpoint; the rewind then reports
	// the call as having no checkpoint (a transaction's before record is
	// the exception: its command is blocked, tx_recorder.go).
	err := AppendRecords(r.index, rec)
	r.store.maybeEvict(context.Background())
	return err
}
