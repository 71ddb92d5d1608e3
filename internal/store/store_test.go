package store

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tiny-agent/tiny-go/internal/session"
)

func TestCreateLayout(t *testing.T) {
	cwd := t.TempDir()
	clock := newTestClock()
	s := createStore(t, cwd, Options{Clock: clock.Now})

	dir := SessionsDir(cwd)
	for _, d := range []string{filepath.Dir(dir), dir} {
		fi, err := os.Stat(d)
		if err != nil {
			t.Fatal(err)
		}
		if perm := fi.Mode().Perm(); perm != 0o700 {
			t.Errorf("%s has mode %o, want 700", d, perm)
		}
	}
	fi, err := os.Lstat(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 {
		t.Errorf("session file mode %v, want regular 0600", fi.Mode())
	}
	want := "2026-12-02T12-51-32-123Z_" + s.ID() + ".jsonl"
	if s.Path() != filepath.Join(dir, want) {
		t.Errorf("path %s, want %s in %s", s.Path(), want, dir)
	}
	if !ValidID(s.ID()) {
		t.Errorf("id %q is not a UUIDv7", s.ID())
	}

	st := reduceFile(t, s.Path())
	wantHeader := session.Header{ID: s.ID(), CreatedAt: time.Date(2026, 12, 2, 12, 51, 32, 123_000_000, time.UTC).UnixMilli(),
		Cwd: cwd, Provider: "openrouter", Model: "test/model", EnvironmentIdentity: "test-env"}
	if st.Header != wantHeader {
		t.Errorf("header %+v, want %+v", st.Header, wantHeader)
	}
	if got, want := printed(t, s.State()), printed(t, st); got != want {
		t.Errorf("memory state %s\nfile state %s", got, want)
	}
}

func TestCreateRejectsEmptyHeaderFields(t *testing.T) {
	for _, nh := range []NewHeader{
		{Model: "m", EnvironmentIdentity: "e"},
		{Provider: "p", EnvironmentIdentity: "e"},
		{Provider: "p", Model: "m"},
	} {
		if _, err := Create(t.TempDir(), nh, Options{}); err == nil {
			t.Errorf("Create(%+v) succeeded", nh)
		}
	}
}

func TestFileNameStamp(t *testing.T) {
	ts := time.Date(2026, 1, 2, 3, 4, 5, 7_900_000, time.FixedZone("X", 3600))
	got := FileName(ts, "018f0000-0000-7000-8000-000000000001")
	if want := "2026-01-02T02-04-05-007Z_018f0000-0000-7000-8000-000000000001.jsonl"; got != want {
		t.Errorf("FileName = %s, want %s", got, want)
	}
	stamp, id, ok := parseFileName(got)
	if !ok || id != "018f0000-0000-7000-8000-000000000001" || !stamp.Equal(ts.Truncate(time.Millisecond)) {
		t.Errorf("parseFileName(%s) = %v %s %v", got, stamp, id, ok)
	}
	for _, bad := range []string{"x.jsonl", "2026-01-02T02-04-05-007Z_018F0000-0000-7000-8000-000000000001.jsonl", got + ".tmp"} {
		if _, _, ok := parseFileName(bad); ok {
			t.Errorf("parseFileName(%s) accepted", bad)
		}
	}
}

func TestCommitAssignsSeqIDsAndTimestamps(t *testing.T) {
	clock := newTestClock()
	s := createStore(t, t.TempDir(), Options{Clock: clock.Now})
	r := newTestRun(t)
	var all []session.Fact
	for _, tx := range r.transactions("hello", "hi") {
		all = append(all, commit(t, s, tx)...)
	}
	ids := map[string]bool{}
	for i, f := range all {
		if f.Seq != int64(i+1) {
			t.Errorf("fact %d has seq %d", i, f.Seq)
		}
		if !ValidID(f.ID) {
			t.Errorf("fact %d id %q is not a UUIDv7", i, f.ID)
		}
		if ids[f.ID] {
			t.Errorf("fact %d reuses id %s", i, f.ID)
		}
		ids[f.ID] = true
	}
	if all[0].ID != r.user || all[2].ID == "" {
		t.Errorf("preset id not kept: %s", all[0].ID)
	}
	// One clock reading per transaction (the header took the first).
	base := time.Date(2026, 12, 2, 12, 51, 32, 123_000_000, time.UTC).UnixMilli()
	wantTS := []int64{base + 1, base + 1, base + 2, base + 3, base + 3, base + 3}
	for i, f := range all {
		if f.Timestamp != wantTS[i] {
			t.Errorf("fact %d timestamp %d, want %d", i, f.Timestamp, wantTS[i])
		}
	}
	// Store-made ids (records and usage) are in creation order.
	made := []string{all[1].ID, all[2].ID, all[4].ID, all[5].ID}
	if !slices.IsSorted(made) {
		t.Errorf("store-made ids not sorted: %v", made)
	}
	if got, want := printed(t, s.State()), printed(t, reduceFile(t, s.Path())); got != want {
		t.Errorf("memory state %s\nfile state %s", got, want)
	}
	if st := s.State(); st.Facts != 6 || !st.Idle() || st.Usage.Input != 10 {
		t.Errorf("state facts=%d idle=%v usage=%+v", st.Facts, st.Idle(), st.Usage)
	}
}

func TestNewIDIsMonotonic(t *testing.T) {
	prev := ""
	for i := range 20000 {
		id, err := NewID()
		if err != nil {
			t.Fatal(err)
		}
		if !ValidID(id) {
			t.Fatalf("%q is not a UUIDv7", id)
		}
		if id <= prev {
			t.Fatalf("id %d %s does not sort after %s", i, id, prev)
		}
		prev = id
	}
}

func TestRejectedCandidateChangesNothing(t *testing.T) {
	s := createStore(t, t.TempDir(), Options{})
	r := commitRun(t, s, "first")
	before := readFile(t, s.Path())
	stateBefore := printed(t, s.State())
	factsBefore := s.State().Facts

	bad := map[string][]session.Fact{
		"attempt without run": newTestRun(t).request(),
		"dangling input": {
			{Entry: &session.UserEntry{Content: "x"}},
			{Record: &session.RunStarted{OperationID: mustID(t), InputEntryID: mustID(t)}},
		},
		"duplicate id":  {{ID: r.user, Entry: &session.UserEntry{Content: "again"}}, {Record: &session.RunStarted{OperationID: mustID(t), InputEntryID: r.user}}},
		"empty":         {},
		"unknown owner": {{Usage: &session.UsageFact{OperationID: r.op, AttemptID: mustID(t)}}},
	}
	for name, tx := range bad {
		_, err := s.Commit(context.Background(), tx)
		var rej *RejectedError
		if !errors.As(err, &rej) {
			t.Errorf("%s: got %v, want a RejectedError", name, err)
			continue
		}
		if !strings.Contains(err.Error(), rej.Corruption.Code) {
			t.Errorf("%s: error %q does not name the code", name, err)
		}
	}
	if after := readFile(t, s.Path()); !bytes.Equal(after, before) {
		t.Errorf("file changed by rejected candidates:\n%s", after[len(before):])
	}
	if got := printed(t, s.State()); got != stateBefore {
		t.Errorf("state changed by rejected candidates:\n%s\n%s", got, stateBefore)
	}
	next := commit(t, s, newTestRun(t).accept("second"))
	if next[0].Seq != factsBefore+1 {
		t.Errorf("next seq %d, want %d", next[0].Seq, factsBefore+1)
	}
}

// cutSink writes only the first limit bytes of the next write and then
// fails (fail) or reports a short write (!fail); it can also fail Sync.
type cutSink struct {
	sink
	limit    int // <0: pass writes through
	fail     bool
	syncErr  error
	syncs    int
	truncate []int64
}

func (c *cutSink) WriteAt(p []byte, off int64) (int, error) {
	if c.limit < 0 {
		return c.sink.WriteAt(p, off)
	}
	n, err := c.sink.WriteAt(p[:min(c.limit, len(p))], off)
	c.limit = -1
	if err != nil {
		return n, err
	}
	if c.fail {
		return n, errors.New("disk on fire")
	}
	return n, nil
}

func (c *cutSink) Sync() error {
	c.syncs++
	if c.syncErr != nil {
		return c.syncErr
	}
	return c.sink.Sync()
}

func (c *cutSink) Truncate(size int64) error {
	c.truncate = append(c.truncate, size)
	return c.sink.Truncate(size)
}

func TestFailedWriteTruncates(t *testing.T) {
	for _, tc := range []struct {
		name  string
		limit int
		fail  bool
		sync  error
		fsync bool
	}{
		{name: "error mid-line", limit: 17, fail: true},
		{name: "error before any byte", limit: 0, fail: true},
		{name: "short write", limit: 30},
		{name: "error after the whole line", limit: 1 << 20, fail: true},
		{name: "sync fails", limit: -1, sync: errors.New("EIO"), fsync: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cut := &cutSink{limit: -1}
			s := createStore(t, t.TempDir(), Options{Fsync: tc.fsync, wrapSink: func(f sink) sink { cut.sink = f; return cut }})
			commitRun(t, s, "first")
			before := readFile(t, s.Path())
			stateBefore := printed(t, s.State())

			cut.limit, cut.fail, cut.syncErr = tc.limit, tc.fail, tc.sync
			tx := newTestRun(t).accept("lost")
			if _, err := s.Commit(context.Background(), tx); err == nil {
				t.Fatal("commit succeeded through a failing write")
			}
			if after := readFile(t, s.Path()); !bytes.Equal(after, before) {
				t.Fatalf("file not truncated back: %d bytes, want %d", len(after), len(before))
			}
			if got := printed(t, s.State()); got != stateBefore {
				t.Errorf("state changed by the failed commit")
			}
			cut.syncErr = nil
			// The same transaction commits cleanly afterwards, with the
			// seq it would have had.
			out := commit(t, s, tx)
			if out[0].Seq != 7 {
				t.Errorf("seq after failed write %d, want 7", out[0].Seq)
			}
			if got, want := printed(t, s.State()), printed(t, reduceFile(t, s.Path())); got != want {
				t.Errorf("memory and file disagree after recovery from a failed write")
			}
		})
	}
}

func TestCloseThenCommit(t *testing.T) {
	cwd := t.TempDir()
	s := createStore(t, cwd, Options{})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := s.Commit(context.Background(), newTestRun(t).accept("x")); !errors.Is(err, os.ErrClosed) {
		t.Errorf("commit after close: %v, want os.ErrClosed", err)
	}
	// Closing released the lock.
	s2, err := Open(cwd, s.ID(), Options{})
	if err != nil {
		t.Fatalf("reopen after close: %v", err)
	}
	s2.Close()
}

func TestCommitContextCancelledWhileWaiting(t *testing.T) {
	s := createStore(t, t.TempDir(), Options{})
	// Hold the queue as a commit in progress would.
	s.queue.acquire(context.Background())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		_, err := s.Commit(ctx, newTestRun(t).accept("never"))
		done <- err
	}()
	for s.queue.waiting() == 0 {
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want context.Canceled", err)
	}
	s.queue.release()
	out := commit(t, s, newTestRun(t).accept("after"))
	if out[0].Seq != 1 || s.State().Facts != 2 {
		t.Errorf("cancelled commit left a trace: seq %d, facts %d", out[0].Seq, s.State().Facts)
	}
}

func TestEnvironmentIdentity(t *testing.T) {
	dir := t.TempDir()
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	if got, _ := EnvironmentIdentity(link, getenv); got != real {
		t.Errorf("identity %q, want the resolved cwd %q", got, real)
	}
	env["TINY_AGENT_ENVIRONMENT_IDENTITY"] = "  box-7 \n"
	if got, _ := EnvironmentIdentity(link, getenv); got != "box-7" {
		t.Errorf("identity %q, want box-7", got)
	}
	env["TINY_AGENT_ENVIRONMENT_IDENTITY"] = "   "
	if got, _ := EnvironmentIdentity(link, getenv); got != real {
		t.Errorf("blank variable: identity %q, want %q", got, real)
	}
}

func TestStateSnapshotIsStable(t *testing.T) {
	s := createStore(t, t.TempDir(), Options{})
	commitRun(t, s, "one")
	snap := s.State()
	want := printed(t, snap)
	commitRun(t, s, "two")
	commit(t, s, newTestRun(t).accept("three"))
	if got := printed(t, snap); got != want {
		t.Errorf("snapshot changed by later commits")
	}
	if !reflect.DeepEqual(s.State().Header, snap.Header) {
		t.Errorf("header changed")
	}
}

// FuzzParseFileName checks that parseFileName accepts exactly the names
// FileName makes, and that what it accepts round-trips.
func FuzzParseFileName(f *testing.F) {
	f.Add("2026-12-02T12-51-32-123Z_018f0000-0000-7000-8000-000000000001.jsonl")
	f.Add("2026-13-45T99-99-99-999Z_018f0000-0000-7000-8000-000000000001.jsonl")
	f.Add("x.jsonl")
	f.Add("")
	f.Fuzz(func(t *testing.T, name string) {
		stamp, id, ok := parseFileName(name)
		if !ok {
			return
		}
		if again := FileName(stamp, id); again != name {
			t.Fatalf("parseFileName(%q) = %v, %s; FileName gives %q", name, stamp, id, again)
		}
	})
}
