// Package fork makes a new session from a prefix of another: the source's
// committed lines up to a transaction boundary, byte for byte, under a new
// header id. The source is only read. Where a fork came from is kept
// beside the new session (fork.json in its sidecar directory), never in
// the session file, whose format is shared with other runtimes.
package fork

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"golang.org/x/sys/unix"

	"github.com/tiny-agent/tiny-go/internal/checkpoint"
	"github.com/tiny-agent/tiny-go/internal/reasoning"
	"github.com/tiny-agent/tiny-go/internal/session"
	"github.com/tiny-agent/tiny-go/internal/store"
)

// OriginFile is the name of a fork's origin in its sidecar directory.
const OriginFile = "fork.json"

// Origin says which session and point a fork came from.
type Origin struct {
	Source string `json:"source"` // the source session's id
	At     int64  `json:"at"`     // the last seq the fork has (0: header only)
	// Turn is set when a conversation rewind made the fork: it goes back
	// to just before this user turn (1-based).
	Turn      int   `json:"turn,omitempty"`
	CreatedAt int64 `json:"createdAt"` // ms
}

// Boundaries returns the seqs at which the committed, valid part of a
// session file can be cut: 0 (just the header) and the last seq of every
// transaction. The file must have a valid header.
func Boundaries(data []byte) ([]int64, error) {
	lines, err := committedLines(data)
	if err != nil {
		return nil, err
	}
	out := []int64{0}
	for _, l := range lines[1:] {
		out = append(out, l.last)
	}
	return out, nil
}

type line struct {
	end   int   // byte offset just after its LF
	first int64 // seq of its first fact (0 for the header)
	last  int64
}

// committedLines splits the committed prefix of data (up to the final LF)
// into lines, stopping at the first line that does not decode: a fork
// never reaches past a corruption.
func committedLines(data []byte) ([]line, error) {
	i := bytes.IndexByte(data, '\n')
	if i < 0 {
		return nil, errors.New("the session has no committed header")
	}
	if _, c := session.DecodeHeader(data[:i]); c != nil {
		return nil, fmt.Errorf("the session header is invalid: %w", c)
	}
	lines := []line{{end: i + 1}}
	off := i + 1
	for {
		j := bytes.IndexByte(data[off:], '\n')
		if j < 0 {
			return lines, nil // the torn tail is not committed
		}
		facts, c := session.DecodeTransaction(data[off : off+j])
		if c != nil || len(facts) == 0 {
			return lines, nil
		}
		lines = append(lines, line{end: off + j + 1, first: facts[0].Seq, last: facts[len(facts)-1].Seq})
		off += j + 1
	}
}

// Prefix returns the bytes of a fork of data at seq at (-1: every
// committed fact): the header with its id replaced by newID, byte for
// byte otherwise, and every committed line up to the transaction that ends
// at at. A seq inside a transaction is refused (a transaction is atomic),
// and so is a prefix that does not reduce. It is copyPrefix over data.
func Prefix(data []byte, at int64, newID string) ([]byte, error) {
	var out bytes.Buffer
	if _, _, err := copyPrefix(bytes.NewReader(data), int64(len(data)), at, newID, &out, func() error { out.Reset(); return nil }); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// copyPrefix streams the fork of the session read from src at seq at
// (-1: every committed fact) to w, as Prefix describes, in one pass that
// reduces what it copies and reads little past the cut: memory is the
// reduced state of the prefix (the text of compacted messages released),
// never the file. reset empties w for the rare second pass (a compaction
// that retains a message whose text was released). It returns the seq the
// fork ends at and the ids of its facts.
func copyPrefix(src io.ReadSeeker, sizeHint, at int64, newID string, w io.Writer, reset func() error) (int64, map[string]bool, error) {
	if !store.ValidID(newID) {
		return 0, nil, fmt.Errorf("%q is not a session id", newID)
	}
	for _, lean := range []bool{true, false} {
		if !lean {
			if _, err := src.Seek(0, io.SeekStart); err != nil {
				return 0, nil, err
			}
			if err := reset(); err != nil {
				return 0, nil, err
			}
		}
		end, ids, err := copyPrefixOnce(src, sizeHint, at, newID, w, lean)
		if !errors.Is(err, session.ErrReleasedTextNeeded) {
			return end, ids, err
		}
	}
	panic("unreachable")
}

func copyPrefixOnce(src io.Reader, sizeHint, at int64, newID string, w io.Writer, lean bool) (int64, map[string]bool, error) {
	var (
		rd      = &stoppable{r: src}
		line    []byte // the line being applied
		header  bool   // the header was decoded and written
		last    int64  // the last seq copied
		cutLine int    // the line the fork ends with, once copied
		failed  error  // the first refusal or write error
		ids     = map[string]bool{}
	)
	stop := func(err error) {
		if failed == nil {
			failed = err
		}
		rd.stop.Store(true)
	}
	hooks := session.ReadHooks{
		Line: func(l []byte) { line = append(line[:0], l...) },
		Header: func(session.Header) {
			header = true
			h, err := replaceID(line[:len(line)-1], newID)
			if err == nil {
				_, err = w.Write(append(h, '\n'))
			}
			if err != nil {
				stop(err)
			} else if at == 0 {
				cutLine = 1
				rd.stop.Store(true)
			}
		},
		Transaction: func(n int, facts []session.Fact) {
			if rd.stop.Load() || len(facts) == 0 {
				return // read ahead of the cut, or after a refusal
			}
			first, end := facts[0].Seq, facts[len(facts)-1].Seq
			if at >= 0 && at < end {
				stop(fmt.Errorf("seq %d is inside a transaction (seqs %d-%d are committed together); fork at %d or %d", at, first, end, first-1, end))
				return
			}
			if _, err := w.Write(line); err != nil {
				stop(err)
				return
			}
			for _, f := range facts {
				ids[f.ID] = true
			}
			last = end
			if end == at {
				cutLine = n
				rd.stop.Store(true)
			}
		},
		ReleaseCompacted: lean,
	}
	_, _, c, err := session.ReadSession(rd, sizeHint, hooks)
	switch {
	case failed != nil:
		return 0, nil, failed
	case cutLine > 0 && (c == nil || c.Line > cutLine) && (err == nil || errors.Is(err, session.ErrReleasedTextNeeded)):
		// What was read ahead of the cut is not the fork's.
		return at, ids, nil
	case err != nil:
		return 0, nil, err
	case !header && c != nil:
		return 0, nil, fmt.Errorf("the session header is invalid: %w", c)
	case c != nil && decodes(line):
		return 0, nil, fmt.Errorf("the prefix up to seq %d does not reduce: %w", max(at, last), c)
	case at < 0:
		// Every committed line (up to the first that does not decode,
		// which a fork never reaches past).
		return last, ids, nil
	}
	return 0, nil, fmt.Errorf("seq %d is not in the session (its last committed seq is %d)", at, last)
}

// decodes reports whether a transaction line (with its LF) decodes: a
// line that does not ends the committed part a fork may take.
func decodes(line []byte) bool {
	if len(line) == 0 {
		return false
	}
	facts, c := session.DecodeTransaction(line[:len(line)-1])
	return c == nil && len(facts) > 0
}

// stoppable reads r until stop is set, then reports the end: the reducer
// stops soon after the fork's last line instead of reading the rest.
// stop is atomic: the reducer reads on a goroutine of its own while the
// line callback sets it.
type stoppable struct {
	r    io.Reader
	stop atomic.Bool
}

func (s *stoppable) Read(p []byte) (int, error) {
	if s.stop.Load() {
		return 0, io.EOF
	}
	return s.r.Read(p)
}

// replaceID replaces the value of the header's top-level "id" member,
// leaving every other byte as it is.
func replaceID(header []byte, newID string) ([]byte, error) {
	dec := jsontext.NewDecoder(bytes.NewReader(header))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return nil, errors.New("the session header is not an object")
	}
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return nil, fmt.Errorf("session header: %w", err)
		}
		name := tok.String()
		start := dec.InputOffset()
		val, err := dec.ReadValue()
		if err != nil {
			return nil, fmt.Errorf("session header: %w", err)
		}
		if name != "id" {
			continue
		}
		// InputOffset is before any white space preceding the value.
		start += int64(bytes.Index(header[start:], val))
		quoted, _ := json.Marshal(newID)
		out := append([]byte{}, header[:start]...)
		out = append(out, quoted...)
		return append(out, header[start+int64(len(val)):]...), nil
	}
	return nil, errors.New("the session header has no id")
}

// Result is a fork written to disk.
type Result struct {
	ID   string
	Path string
}

// Write forks the session file at sourcePath at seq at into a new session
// file in the same sessions directory, with id newID (a fresh one when
// empty), and records its origin beside it. The new file is created with
// O_EXCL and synced before its origin is written; the source is only read.
// turn is recorded in the origin (0 when not a conversation rewind).
func Write(sourcePath string, at int64, newID string, turn int, now time.Time) (Result, error) {
	src, err := os.Open(sourcePath)
	if err != nil {
		return Result{}, fmt.Errorf("fork: %w", err)
	}
	defer src.Close()
	var size int64
	if fi, err := src.Stat(); err == nil {
		size = fi.Size()
	}
	h, err := store.ReadHeader(sourcePath)
	if err != nil {
		return Result{}, fmt.Errorf("fork: the session header is invalid: %w", err)
	}
	if newID == "" {
		if newID, err = store.NewID(); err != nil {
			return Result{}, err
		}
	}
	// The fork is streamed from the source into its own file, which is
	// removed if the fork is refused.
	path := filepath.Join(filepath.Dir(sourcePath), store.FileName(now, newID))
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		return Result{}, fmt.Errorf("fork: %w", err)
	}
	w := bufio.NewWriterSize(f, 64<<10)
	reset := func() error {
		w.Reset(f)
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return err
		}
		return f.Truncate(0)
	}
	at, ids, err := copyPrefix(src, size, at, newID, w, reset)
	if err != nil {
		err = fmt.Errorf("fork %s: %w", h.ID, err)
	} else if werr := w.Flush(); werr != nil {
		err = fmt.Errorf("fork: %w", werr)
	} else if werr := f.Sync(); werr != nil {
		err = fmt.Errorf("fork: %w", werr)
	}
	if cerr := f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("fork: %w", cerr)
	}
	if err != nil {
		os.Remove(path)
		return Result{}, err
	}
	res := Result{ID: newID, Path: path}
	if err := WriteOrigin(path, Origin{Source: h.ID, At: at, Turn: turn, CreatedAt: now.UnixMilli()}); err != nil {
		return res, err
	}
	if err := inheritCheckpoints(sourcePath, path, ids); err != nil {
		return res, err
	}
	// The fork's assistant entries are the source's: their reasoning
	// details go back to the provider from the fork as they would have
	// from the source.
	if err := reasoning.Inherit(sourcePath, path, func(id string) bool { return ids[id] }); err != nil {
		return res, fmt.Errorf("fork: %w", err)
	}
	return res, nil
}

// inheritCheckpoints copies the source's checkpoint index up to the first
// record of a tool call that the fork does not have, so the fork can
// rewind the turns it shares with its source.
func inheritCheckpoints(sourcePath, forkPath string, ids map[string]bool) error {
	data, err := store.ReadSidecarFile(sourcePath, checkpoint.IndexFile)
	if err != nil {
		return fmt.Errorf("fork: read checkpoints: %w", err)
	}
	keep := 0
	for rest := data; ; {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			break
		}
		recs, err := checkpoint.ReadIndex(bytes.NewReader(rest[:i+1]))
		if err != nil || len(recs) != 1 || (recs[0].ToolStartedID != "" && !ids[recs[0].ToolStartedID]) {
			break
		}
		keep += i + 1
		rest = rest[i+1:]
	}
	if keep == 0 {
		return nil
	}
	if err := store.CreateSidecarFile(forkPath, checkpoint.IndexFile, data[:keep]); err != nil {
		return fmt.Errorf("fork: checkpoints: %w", err)
	}
	return nil
}

// WriteOrigin records a fork's origin in its sidecar directory.
func WriteOrigin(sessionPath string, o Origin) error {
	dir, err := store.SidecarDir(sessionPath, true)
	if err != nil {
		return fmt.Errorf("fork origin: %w", err)
	}
	data, _ := json.Marshal(o)
	tmp := fmt.Sprintf(".%s.tmp-%d", OriginFile, os.Getpid())
	f, err := store.OpenSidecarFile(dir, tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC)
	if err != nil {
		return fmt.Errorf("fork origin: %w", err)
	}
	_, err = f.Write(append(data, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(filepath.Join(dir, tmp), filepath.Join(dir, OriginFile))
	}
	if err != nil {
		os.Remove(filepath.Join(dir, tmp))
		return fmt.Errorf("fork origin: %w", err)
	}
	return nil
}

// ReadOrigin returns the origin of the session at sessionPath, or nil when
// it is not a fork.
func ReadOrigin(sessionPath string) (*Origin, error) {
	dir, err := store.SidecarDir(sessionPath, false)
	if err != nil {
		return nil, nil // no sidecar directory: not a fork
	}
	f, err := store.OpenSidecarFile(dir, OriginFile, os.O_RDONLY)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, 1<<16))
	if err != nil {
		return nil, err
	}
	var o Origin
	if err := json.Unmarshal(bytes.TrimSpace(data), &o); err != nil {
		return nil, fmt.Errorf("%s: %w", OriginFile, err)
	}
	return &o, nil
}
