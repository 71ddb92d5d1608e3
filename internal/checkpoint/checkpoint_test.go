package checkpoint

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/tiny-agent/tiny-go/internal/checkpoint/checkpointtest"
)

func writeFile(t *testing.T, dir, rel, content string) {
	t.Helper()
	p := filepath.Join(dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// task plays three turns of effects through a recorder and returns the
// trees before each turn and the index.
type task struct {
	t     *testing.T
	dir   string
	store *Store
	rec   *Recorder
	index *bytes.Buffer
	n     int
}

func newTask(t *testing.T, dir string, opts Options) *task {
	s, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	idx := &bytes.Buffer{}
	return &task{t: t, dir: dir, store: s, rec: NewRecorder(s, idx), index: idx}
}

func (k *task) effect(tool string, args string, do func()) {
	k.n++
	after := k.rec.BeforeEffect(context.Background(), "call-"+string(rune('a'+k.n)), tool, jsontext.Value(args))
	do()
	after()
}

func (k *task) records() []Record {
	recs, err := ReadIndex(bytes.NewReader(k.index.Bytes()))
	if err != nil {
		k.t.Fatal(err)
	}
	return recs
}

func (k *task) rewind(from int, force bool) Summary {
	k.t.Helper()
	plan, err := k.store.PlanRewind(context.Background(), k.records()[from:], force)
	if err != nil {
		k.t.Fatal(err)
	}
	sum, _, err := k.store.Apply(context.Background(), plan, force)
	if err != nil {
		k.t.Fatal(err)
	}
	return sum
}

func playThreeTurns(t *testing.T, k *task) (trees []map[string]string, starts []int) {
	dir := k.dir
	mark := func() {
		trees = append(trees, checkpointtest.TreeDigests(t, dir))
		starts = append(starts, len(k.records()))
	}
	mark() // before turn 1
	k.effect("write", `{"path":"notes.txt","content":"one\n"}`, func() { writeFile(t, dir, "notes.txt", "one\n") })
	k.effect("edit", `{"path":"src/main.go"}`, func() { writeFile(t, dir, "src/main.go", "package main // edited\n") })
	k.effect("bash", `{"command":"sed -i s/old/new/ doc.md && mkdir -p gen && echo x > gen/out.txt"}`, func() {
		checkpointtest.Sh(t, dir, "sed -i s/old/new/ doc.md && mkdir -p gen && echo x > gen/out.txt")
	})
	mark() // before turn 2
	k.effect("bash", `{"command":"rm doc.md; chmod +x run.sh; ln -s notes.txt link"}`, func() { checkpointtest.Sh(t, dir, "rm doc.md; chmod +x run.sh; ln -s notes.txt link") })
	k.effect("write", `{"path":"notes.txt","content":"two\n"}`, func() { writeFile(t, dir, "notes.txt", "two\n") })
	mark() // before turn 3
	k.effect("bash", `{"command":"mv src/main.go src/app.go; echo y >> gen/out.txt"}`, func() { checkpointtest.Sh(t, dir, "mv src/main.go src/app.go; echo y >> gen/out.txt") })
	return trees, starts
}

func seed(t *testing.T, dir string) {
	writeFile(t, dir, "doc.md", "an old doc\n")
	writeFile(t, dir, "src/main.go", "package main\n")
	writeFile(t, dir, "run.sh", "echo run\n")
}

func TestRewindEachTurnPlain(t *testing.T) {
	for turn := 0; turn < 3; turn++ {
		dir := t.TempDir()
		seed(t, dir)
		k := newTask(t, dir, Options{DisableGit: true})
		trees, starts := playThreeTurns(t, k)
		sum := k.rewind(starts[turn], false)
		if got := checkpointtest.TreeDigests(t, dir); !maps.Equal(got, trees[turn]) {
			t.Fatalf("turn %d: tree after rewind\n%v\nwant\n%v\nsummary %+v", turn+1, got, trees[turn], sum)
		}
		if len(sum.Skipped) != 0 || len(sum.Warnings) != 0 {
			t.Fatalf("turn %d: unexpected skips %+v", turn+1, sum)
		}
	}
}

func TestRewindEachTurnGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	for turn := 0; turn < 3; turn++ {
		dir := t.TempDir()
		checkpointtest.Sh(t, dir, "git init -q && echo 'ignored.log' > .gitignore")
		seed(t, dir)
		writeFile(t, dir, "ignored.log", "keep me\n")
		checkpointtest.Sh(t, dir, "git add -A && git commit -qm init")
		k := newTask(t, dir, Options{})
		if k.store.Mode() != "git" {
			t.Fatalf("mode %s", k.store.Mode())
		}
		trees, starts := playThreeTurns(t, k)
		sum := k.rewind(starts[turn], false)
		if got := checkpointtest.TreeDigests(t, dir); !maps.Equal(got, trees[turn]) {
			t.Fatalf("turn %d: tree after rewind\n%v\nwant\n%v\nsummary %+v", turn+1, got, trees[turn], sum)
		}
	}
}

func TestRewindSkipsUserEditsUnlessForced(t *testing.T) {
	dir := t.TempDir()
	seed(t, dir)
	k := newTask(t, dir, Options{DisableGit: true})
	trees, starts := playThreeTurns(t, k)
	writeFile(t, dir, "notes.txt", "the user's own words\n")
	userTree := checkpointtest.TreeDigests(t, dir)
	sum := k.rewind(starts[0], false)
	if len(sum.Skipped) != 1 || sum.Skipped[0].Path != "notes.txt" || !strings.Contains(sum.Skipped[0].Reason, "changed since tiny-go last changed it") {
		t.Fatalf("skipped %+v", sum.Skipped)
	}
	got := checkpointtest.TreeDigests(t, dir)
	if got["notes.txt"] != userTree["notes.txt"] {
		t.Fatal("the user's edit was overwritten")
	}
	delete(got, "notes.txt")
	want := maps.Clone(trees[0])
	delete(want, "notes.txt")
	if !maps.Equal(got, want) {
		t.Fatalf("other files not restored: %v want %v", got, want)
	}
	sum = k.rewind(starts[0], true)
	if !slices.Contains(sum.Deleted, "notes.txt") {
		t.Fatalf("forced summary %+v", sum)
	}
	if got := checkpointtest.TreeDigests(t, dir); !maps.Equal(got, trees[0]) {
		t.Fatalf("forced rewind: %v want %v", got, trees[0])
	}
}

// A rewind is itself undoable: rewinding to turn 3 after a rewind to turn
// 1 brings the later state back.
func TestRewindThenRedo(t *testing.T) {
	dir := t.TempDir()
	seed(t, dir)
	k := newTask(t, dir, Options{DisableGit: true})
	trees, starts := playThreeTurns(t, k)
	plan, err := k.store.PlanRewind(context.Background(), k.records()[starts[0]:], false)
	if err != nil {
		t.Fatal(err)
	}
	_, done, err := k.store.Apply(context.Background(), plan, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := AppendRecords(k.index, RewindRecords("r1", done, 1)...); err != nil {
		t.Fatal(err)
	}
	if got := checkpointtest.TreeDigests(t, dir); !maps.Equal(got, trees[0]) {
		t.Fatal("rewind failed")
	}
	sum := k.rewind(starts[2], false)
	if got := checkpointtest.TreeDigests(t, dir); !maps.Equal(got, trees[2]) {
		t.Fatalf("redo to turn 3: %v want %v (%+v)", got, trees[2], sum)
	}
}

func TestMissingSnapshotIsReported(t *testing.T) {
	dir := t.TempDir()
	seed(t, dir)
	k := newTask(t, dir, Options{DisableGit: true, MaxFileSize: 16})
	writeFile(t, dir, "big.bin", strings.Repeat("x", 100))
	k.effect("bash", `{"command":"x"}`, func() { writeFile(t, dir, "big.bin", "small now") })
	sum := k.rewind(0, false)
	if len(sum.Skipped) != 1 || sum.Skipped[0].Path != "big.bin" || !strings.Contains(sum.Skipped[0].Reason, "larger than 16 B") {
		t.Fatalf("summary %+v", sum)
	}
}

func gitState(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	for _, args := range [][]string{{"status", "--porcelain=v2", "--untracked-files=all"}, {"stash", "list"}, {"for-each-ref"}, {"rev-parse", "HEAD"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
		b.Write(out)
	}
	idx, err := os.ReadFile(filepath.Join(dir, ".git", "index"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(idx)
	b.WriteString(hex.EncodeToString(sum[:]))
	return b.String()
}

func TestGitCheckpointsLeaveTheRepositoryAlone(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir := t.TempDir()
	checkpointtest.Sh(t, dir, "git init -q && printf 'ignored.log\\n.tiny-agent/\\n' > .gitignore")
	seed(t, dir)
	checkpointtest.Sh(t, dir, "git add -A && git commit -qm init && echo stash >> run.sh && git stash -q && echo staged >> doc.md && git add doc.md && echo wip >> run.sh && echo new > untracked.txt && echo x > ignored.log")
	before := gitState(t, dir)
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		rec := s.Snapshot(context.Background())
		if rec.Missing != "" {
			t.Fatal(rec.Missing)
		}
		files, err := s.treeFiles(rec.Tree)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := files["untracked.txt"]; !ok {
			t.Fatalf("untracked file not in the snapshot: %v", slices.Collect(maps.Keys(files)))
		}
		if _, ok := files["ignored.log"]; !ok || !rec.All {
			t.Fatal("the git-ignored file is not in the snapshot (ignored.go)")
		}
		writeFile(t, dir, "untracked.txt", strings.Repeat("n", i+2))
	}
	writeFile(t, dir, "untracked.txt", "new\n")
	if after := gitState(t, dir); after != before {
		t.Fatalf("repository state changed:\n%s\n---\n%s", before, after)
	}
}

// Past the cap the oldest checkpoints are dropped, the store shrinks, and a
// rewind that needs a dropped one says so while newer ones still work.
func TestEvictionDropsOldestFirst(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, ".tiny-agent", "sessions", "s.d"), 0o700); err != nil {
		t.Fatal(err)
	}
	idx, err := os.OpenFile(filepath.Join(dir, ".tiny-agent", "sessions", "s.d", IndexFile), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	s, err := Open(dir, Options{DisableGit: true, Cap: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	r := NewRecorder(s, idx)
	clock := int64(1000)
	r.now = func() time.Time { clock++; return time.UnixMilli(clock) }
	var starts []int
	for i := 0; i < 8; i++ {
		recs, _ := ReadIndexFile(idx.Name())
		starts = append(starts, len(recs))
		after := r.BeforeEffect(context.Background(), "call"+string(rune('a'+i)), "bash", jsontext.Value(`{}`))
		writeFile(t, dir, "blob.bin", strings.Repeat(string(rune('a'+i)), 20<<10))
		after()
	}
	info, err := Stat(dir, 64<<10)
	if err != nil {
		t.Fatal(err)
	}
	if info.DroppedBefore == 0 || info.Size > 64<<10 {
		t.Fatalf("nothing dropped: %+v", info)
	}
	recs, _ := ReadIndexFile(idx.Name())
	plan, err := s.PlanRewind(context.Background(), recs[starts[0]:], false)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Actions) != 0 || len(plan.Warnings) == 0 || !strings.Contains(strings.Join(plan.Warnings, " "), droppedReason) {
		t.Fatalf("rewind past a dropped checkpoint: %+v", plan)
	}
	plan, err = s.PlanRewind(context.Background(), recs[starts[7]:], false)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Actions) != 1 || len(plan.Warnings) != 0 {
		t.Fatalf("rewind of the newest turn: %+v", plan)
	}
}

// Plain snapshots are stored as changes against a base manifest; every
// one of a long chain (past maxChain, with removals) reads back as the
// full tree, also in a new process.
func TestManifestChain(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{DisableGit: true})
	if err != nil {
		t.Fatal(err)
	}
	var refs []string
	var wants []map[string]string
	for i := 0; i < maxChain+10; i++ {
		writeFile(t, dir, "f"+strconv.Itoa(i%5), strconv.Itoa(i))
		if i%7 == 3 {
			os.Remove(filepath.Join(dir, "f"+strconv.Itoa((i+1)%5)))
		}
		rec := s.Snapshot(context.Background())
		if rec.Missing != "" {
			t.Fatal(rec.Missing)
		}
		want := map[string]string{}
		for j := 0; j < 5; j++ {
			if data, err := os.ReadFile(filepath.Join(dir, "f"+strconv.Itoa(j))); err == nil {
				want["f"+strconv.Itoa(j)] = sha256Hash(data)
			}
		}
		refs, wants = append(refs, rec.Tree), append(wants, want)
	}
	fresh, err := Open(dir, Options{DisableGit: true})
	if err != nil {
		t.Fatal(err)
	}
	for i, ref := range refs {
		files, err := fresh.treeFiles(ref)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for p, f := range files {
			got[p] = f.Hash
		}
		if !maps.Equal(got, wants[i]) {
			t.Fatalf("snapshot %d: %v want %v", i, got, wants[i])
		}
	}
}

func TestTooManyFilesIsMissing(t *testing.T) {
	dir := t.TempDir()
	for i := 0; i < 12; i++ {
		writeFile(t, dir, "f"+strconv.Itoa(i), "x")
	}
	s, err := Open(dir, Options{DisableGit: true, MaxFiles: 10})
	if err != nil {
		t.Fatal(err)
	}
	if rec := s.Snapshot(context.Background()); !strings.Contains(rec.Missing, "more than 10 files") {
		t.Fatalf("record %+v", rec)
	}
}

// The working directory may be a subdirectory of the work tree: snapshots
// cover it alone, with paths relative to it.
func TestRewindInGitSubdirectory(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	top := t.TempDir()
	checkpointtest.Sh(t, top, "git init -q && mkdir -p app && echo outside > outside.txt")
	dir := filepath.Join(top, "app")
	seed(t, dir)
	checkpointtest.Sh(t, top, "git add -A && git commit -qm init")
	k := newTask(t, dir, Options{})
	if k.store.Mode() != "git" {
		t.Fatalf("mode %s", k.store.Mode())
	}
	trees, starts := playThreeTurns(t, k)
	sum := k.rewind(starts[0], false)
	if got := checkpointtest.TreeDigests(t, dir); !maps.Equal(got, trees[0]) {
		t.Fatalf("tree after rewind\n%v\nwant\n%v\nsummary %+v", got, trees[0], sum)
	}
	if b, _ := os.ReadFile(filepath.Join(top, "outside.txt")); string(b) != "outside\n" {
		t.Fatal("a file outside the working directory changed")
	}
}

// A repository without a commit yet, and an empty working directory.
func TestGitWithoutCommitsAndEmptyDirectory(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir := t.TempDir()
	checkpointtest.Sh(t, dir, "git init -q")
	k := newTask(t, dir, Options{})
	before := checkpointtest.TreeDigests(t, dir)
	k.effect("bash", `{}`, func() { writeFile(t, dir, "new.txt", "hello\n") })
	for _, r := range k.records() {
		if r.Missing != "" {
			t.Fatalf("snapshot missing: %s", r.Missing)
		}
	}
	k.rewind(0, false)
	if got := checkpointtest.TreeDigests(t, dir); !maps.Equal(got, before) {
		t.Fatalf("got %v want %v", got, before)
	}
}

// What a background process changes after its call returned, until the
// next snapshot, is rewound with it.
func TestRewindCoversBackgroundChanges(t *testing.T) {
	dir := t.TempDir()
	seed(t, dir)
	k := newTask(t, dir, Options{DisableGit: true})
	before := checkpointtest.TreeDigests(t, dir)
	k.effect("bg", `{"command":"serve"}`, func() {})
	writeFile(t, dir, "served.log", "written later by the background process\n")
	k.effect("bash", `{"command":"true"}`, func() {})
	sum := k.rewind(0, false)
	if got := checkpointtest.TreeDigests(t, dir); !maps.Equal(got, before) {
		t.Fatalf("got %v want %v (%+v)", got, before, sum)
	}
}

// A snapshot cancelled mid-way (Esc during the checkpoint) is recorded as
// missing and does not break the next one.
func TestCancelledGitSnapshotLeavesNoLock(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir := t.TempDir()
	checkpointtest.Sh(t, dir, "git init -q")
	seed(t, dir)
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if rec := s.Snapshot(ctx); rec.Missing == "" {
		t.Fatal("a cancelled snapshot was taken")
	}
	// As if git had been killed while writing the index.
	if err := os.WriteFile(filepath.Join(s.Dir(), "git", "index.lock"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if rec := s.Snapshot(context.Background()); rec.Missing != "" {
		t.Fatalf("the next snapshot failed: %s", rec.Missing)
	}
}

// In git mode a huge untracked file is not kept in the store: the snapshot
// records it as missing and a rewind says so, while the rest rewinds.
func TestGitHugeFileIsMissing(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir := t.TempDir()
	checkpointtest.Sh(t, dir, "git init -q")
	seed(t, dir)
	checkpointtest.Sh(t, dir, "git add -A && git commit -qm init")
	k := newTask(t, dir, Options{MaxFileSize: 1024})
	big := make([]byte, 64<<10)
	for i := range big {
		big[i] = byte(i*7919 + i/13) // poorly compressible
	}
	if err := os.WriteFile(filepath.Join(dir, "data.bin"), big, 0o644); err != nil {
		t.Fatal(err)
	}
	k.effect("bash", `{}`, func() {
		os.WriteFile(filepath.Join(dir, "data.bin"), []byte("small"), 0o644)
		writeFile(t, dir, "doc.md", "changed\n")
	})
	recs := k.records()
	if recs[0].Missing != "" || len(recs[0].Files) != 1 || recs[0].Files[0].Path != "data.bin" || !strings.Contains(recs[0].Files[0].Missing, "larger than 1.0 KiB") {
		t.Fatalf("before record %+v", recs[0])
	}
	sum := k.rewind(0, false)
	if len(sum.Restored) != 1 || sum.Restored[0] != "doc.md" || len(sum.Skipped) != 1 || sum.Skipped[0].Path != "data.bin" {
		t.Fatalf("summary %+v", sum)
	}
}

// Eviction in git mode keeps what the newer snapshots and the private
// index need: after it, the newest turn still rewinds.
func TestGitEvictionKeepsTheNewest(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir := t.TempDir()
	checkpointtest.Sh(t, dir, "git init -q")
	if err := os.MkdirAll(filepath.Join(dir, ".tiny-agent", "sessions", "s.d"), 0o700); err != nil {
		t.Fatal(err)
	}
	idx, err := os.OpenFile(filepath.Join(dir, ".tiny-agent", "sessions", "s.d", IndexFile), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	s, err := Open(dir, Options{Cap: 48 << 10})
	if err != nil {
		t.Fatal(err)
	}
	r := NewRecorder(s, idx)
	clock := int64(1000)
	r.now = func() time.Time { clock++; return time.UnixMilli(clock) }
	noise := func(seed int) string {
		rng := rand.New(rand.NewPCG(uint64(seed), 1))
		b := make([]byte, 20<<10)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return string(b)
	}
	var last int
	for i := 0; i < 6; i++ {
		recs, _ := ReadIndexFile(idx.Name())
		last = len(recs)
		after := r.BeforeEffect(context.Background(), "call"+strconv.Itoa(i), "bash", jsontext.Value(`{}`))
		writeFile(t, dir, "blob.bin", noise(i))
		after()
	}
	if info, _ := Stat(dir, 48<<10); info.DroppedBefore == 0 {
		t.Fatalf("nothing dropped: %+v", info)
	}
	recs, _ := ReadIndexFile(idx.Name())
	want, _ := os.ReadFile(filepath.Join(dir, "blob.bin"))
	plan, err := s.PlanRewind(context.Background(), recs[last:], false)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Apply(context.Background(), plan, false); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(filepath.Join(dir, "blob.bin"))
	if len(plan.Actions) != 1 || string(got) == string(want) || string(got) != noise(4) {
		t.Fatalf("newest turn did not rewind: %+v", plan)
	}
}
