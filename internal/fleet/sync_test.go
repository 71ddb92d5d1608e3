package fleet

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"os"
	"path/filepath"
	"testing"

	_ "gocloud.dev/blob/memblob"

	"github.com/tiny-agent/tiny-go/internal/statekey"
	"github.com/tiny-agent/tiny-go/internal/store"
)

// fixtureLines are the committed lines of a conformance session: header,
// run, attempt, assistant with a call, toolStarted (line 5), its result
// (line 6), then the final step.
func fixtureLines(t *testing.T) [][]byte {
	data, err := os.ReadFile("../../../shared/conformance/session/fixtures/completed-tool-run.jsonl")
	if err != nil {
		t.Skipf("conformance fixtures not beside the checkout: %v", err)
	}
	return bytes.SplitAfter(data, []byte("\n"))
}

func prefix(lines [][]byte, n int) []byte { return bytes.Join(lines[:n], nil) }

// agentWrites makes the session file hold the first n lines and the
// workspace file the given content, as the agent would leave them.
func agentWrites(t *testing.T, repo string, lines [][]byte, n int, work string) {
	dir := filepath.Join(repo, ".tiny-agent", "sessions")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "s.jsonl"), prefix(lines, n), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repo, "work.txt"), []byte(work), 0o644); err != nil {
		t.Fatal(err)
	}
}

// restored is what a retried attempt finds: the workspace file and the
// session bytes.
func restored(t *testing.T, blobs *Blobs) (work, sess string) {
	repo := restoredRepo(t, blobs)
	w, err := os.ReadFile(filepath.Join(repo, "work.txt"))
	if err != nil {
		t.Fatal(err)
	}
	sb, _ := os.ReadFile(filepath.Join(repo, ".tiny-agent", "sessions", "s.jsonl"))
	return string(w), string(sb)
}

// restoredRepo is the workspace a retried attempt restores from blobs.
func restoredRepo(t *testing.T, blobs *Blobs) string {
	repo := filepath.Join(t.TempDir(), "repo")
	s := &syncer{blobs: blobs, cas: &contentStore{blobs: blobs}, prefix: "runs/r/t", repo: repo, attempt: 2}
	m, ok, err := s.load(context.Background())
	if err != nil || !ok {
		t.Fatalf("load: ok=%v err=%v", ok, err)
	}
	writeBase(t, repo)
	if err := s.restore(context.Background(), m); err != nil {
		t.Fatalf("restore: %v", err)
	}
	return repo
}

// writeBase lays out the task's base in repo, as every worker can.
func writeBase(t *testing.T, repo string) {
	if err := os.MkdirAll(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repo, "work.txt"), []byte("base"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestSyncerKeepsWorkspaceAndSessionConsistent(t *testing.T) {
	lines := fixtureLines(t)
	ctx := context.Background()
	s, blobs, repo := baselined(t)
	if w, sess := restored(t, blobs); w != "base" || sess != "" {
		t.Fatalf("after baseline: work %q, session %d bytes", w, len(sess))
	}

	// The model answered with a call: the session goes up, the snapshot
	// stays (nothing ran).
	agentWrites(t, repo, lines, 4, "base")
	if err := s.step(ctx); err != nil {
		t.Fatal(err)
	}
	if w, sess := restored(t, blobs); w != "base" || sess != string(prefix(lines, 4)) {
		t.Fatalf("after the model step: work %q, session %d bytes", w, len(sess))
	}

	// The tool started and changed the workspace, no result yet: the
	// store has its intent with the old workspace, so a retry settles it
	// as interrupted and never sees an effect without its intent.
	agentWrites(t, repo, lines, 5, "changed by the tool")
	if err := s.step(ctx); err != nil {
		t.Fatal(err)
	}
	if w, sess := restored(t, blobs); w != "base" || sess != string(prefix(lines, 5)) {
		t.Fatalf("mid-tool: work %q, session %d bytes", w, len(sess))
	}

	// The result committed: a new snapshot goes with it.
	agentWrites(t, repo, lines, 6, "changed by the tool")
	if err := s.step(ctx); err != nil {
		t.Fatal(err)
	}
	if w, sess := restored(t, blobs); w != "changed by the tool" || sess != string(prefix(lines, 6)) {
		t.Fatalf("after the result: work %q, session %d bytes", w, len(sess))
	}
	if s.man.Facts == 0 {
		t.Error("the manifest does not count the facts")
	}
}

// A retried attempt's session opens in tiny-go wherever the worker that
// ran it died: before the task's first change set (the session alone in
// the store, while tiny-go had sealed integrity records for it and marked
// it so beside its key on this machine: it refused the restored session
// as UNSEALED, and the task failed its test with no step done) and after.
func TestRestoredSessionOpensInTinyGo(t *testing.T) {
	t.Setenv(statekey.EnvDir, t.TempDir())
	lines := fixtureLines(t)
	for _, n := range []int{5, 6} { // mid-tool, before any change set; its result settled
		ctx := context.Background()
		s, blobs, repo := baselined(t)
		// tiny-go writes the session with its records and the mark.
		agentWrites(t, repo, lines, n, "changed by the tool")
		if err := store.SealRecords(filepath.Join(repo, ".tiny-agent", "sessions", "s.jsonl"), prefix(lines, n)); err != nil {
			t.Fatal(err)
		}
		if err := s.step(ctx); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(restoredRepo(t, blobs), ".tiny-agent", "sessions", "s.jsonl")
		k, err := store.NewIntegrityCheck(path)
		if err != nil {
			t.Fatal(err)
		}
		data, _ := os.ReadFile(path)
		for _, line := range bytes.SplitAfter(data, []byte("\n")) {
			if len(line) > 0 {
				k.Line(line)
			}
		}
		if c, err := k.Result(); c != nil || err != nil || !bytes.Equal(data, prefix(lines, n)) {
			t.Errorf("%d lines: the restored session (%d bytes) does not open: %v %v", n, len(data), c.Describe(), err)
		}
	}
}

func TestCutStopsAtTheFirstToolStartedAfterTheSnapshotBegan(t *testing.T) {
	lines := fixtureLines(t)
	all := prefix(lines, len(lines))
	// Read through the assistant entry, then the tool started (and
	// finished) while the workspace was archived: keep through toolStarted.
	if got, want := cut(all, len(prefix(lines, 4))), len(prefix(lines, 5)); got != want {
		t.Errorf("cut after line 4 = %d, want %d (through toolStarted)", got, want)
	}
	// The tool started before the snapshot began and settled while it was
	// taken (line 6): its effect may be missing from it, so its result
	// waits for the next one.
	if got, want := cut(all, len(prefix(lines, 5))), len(prefix(lines, 5)); got != want {
		t.Errorf("cut after line 5 = %d, want %d (short of the result)", got, want)
	}
	// Nothing started or settled after the snapshot began: keep all.
	if got := cut(all, len(prefix(lines, 6))); got != len(all) {
		t.Errorf("cut after line 6 = %d, want %d", got, len(all))
	}
}

func TestPackUnpackRoundTrip(t *testing.T) {
	src := t.TempDir()
	for name, body := range map[string]string{"a.txt": "A", "sub/b.sh": "#!/bin/sh\n", ".tiny-agent/sessions/x.jsonl": "skip", ".tiny-agent/sessions/x.d/r": "keep"} {
		p := filepath.Join(src, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("a.txt", filepath.Join(src, "link")); err != nil {
		t.Fatal(err)
	}
	data, err := packDir(src, skipSession)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "out")
	if err := unpackDir(data, dst); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dst, "link")); string(b) != "A" {
		t.Errorf("link reads %q", b)
	}
	if fi, err := os.Stat(filepath.Join(dst, "sub/b.sh")); err != nil || fi.Mode().Perm()&0o100 == 0 {
		t.Errorf("sub/b.sh lost its mode: %v %v", fi, err)
	}
	if _, err := os.Stat(filepath.Join(dst, ".tiny-agent/sessions/x.jsonl")); err == nil {
		t.Error("the session file went into the snapshot")
	}
	if b, _ := os.ReadFile(filepath.Join(dst, ".tiny-agent/sessions/x.d/r")); string(b) != "keep" {
		t.Error("the sidecar is not in the snapshot")
	}
}

// FuzzUnpackDir: whatever the archive, nothing lands outside the folder.
func FuzzUnpackDir(f *testing.F) {
	src := f.TempDir()
	_ = os.WriteFile(filepath.Join(src, "a"), []byte("x"), 0o644)
	if data, err := packDir(src, nil); err == nil {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		parent := t.TempDir()
		_ = unpackDir(data, filepath.Join(parent, "in"))
		entries, _ := os.ReadDir(parent)
		for _, e := range entries {
			if e.Name() != "in" {
				t.Fatalf("unpack wrote %s outside its folder", e.Name())
			}
		}
	})
}

func TestUnpackRefusesToWriteThroughALink(t *testing.T) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	outside := t.TempDir()
	_ = tw.WriteHeader(&tar.Header{Name: "l", Typeflag: tar.TypeSymlink, Linkname: outside, Mode: 0o777})
	_ = tw.WriteHeader(&tar.Header{Name: "l/evil", Typeflag: tar.TypeReg, Mode: 0o644, Size: 1})
	_, _ = tw.Write([]byte("x"))
	_ = tw.Close()
	_ = zw.Close()
	if err := unpackDir(buf.Bytes(), filepath.Join(t.TempDir(), "in")); err == nil {
		t.Error("an archive wrote through a link that leaves the folder")
	}
	if _, err := os.Stat(filepath.Join(outside, "evil")); err == nil {
		t.Error("evil was written outside the folder")
	}
}

// baselined is a syncer of a first attempt over a fresh workspace of the
// base, in memory, its baseline taken.
func baselined(t *testing.T) (*syncer, *Blobs, string) {
	t.Helper()
	ctx := context.Background()
	blobs, err := OpenBlobs(ctx, "mem://")
	if err != nil {
		t.Fatal(err)
	}
	repo := filepath.Join(t.TempDir(), "repo")
	if err := os.MkdirAll(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	writeBase(t, repo)
	s := &syncer{blobs: blobs, cas: &contentStore{blobs: blobs}, prefix: "runs/r/t", repo: repo, attempt: 1}
	if err := s.baseline(ctx, ""); err != nil {
		t.Fatal(err)
	}
	return s, blobs, repo
}
