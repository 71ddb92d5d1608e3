package checkpoint

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/tiny-agent/tiny-go/internal/journal"
)

// Trees of the tracking benchmarks, made once per run (100k files take a
// while) and removed by TestMain.
var (
	benchTreesMu sync.Mutex
	benchTrees   = map[string]string{}
	benchRoot    string
)

func TestMain(m *testing.M) {
	journal.ChildMain() // journal.Start's child (tx_journal_linux_test.go)
	code := m.Run()
	if benchRoot != "" {
		os.RemoveAll(benchRoot)
	}
	os.Exit(code)
}

// benchShape is a working tree of n files: "plain" (no git), "git" (the
// files committed), "git+nm" (committed, plus 30,000 files in an ignored
// node_modules).
func benchShape(b *testing.B, shape string, n int) string {
	b.Helper()
	benchTreesMu.Lock()
	defer benchTreesMu.Unlock()
	key := fmt.Sprintf("%s-%d", shape, n)
	if d, ok := benchTrees[key]; ok {
		os.RemoveAll(filepath.Join(d, ".tiny-agent"))
		return d
	}
	if benchRoot == "" {
		r, err := os.MkdirTemp("", "tiny-go-track-bench-")
		if err != nil {
			b.Fatal(err)
		}
		benchRoot = r
	}
	dir := filepath.Join(benchRoot, key)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	generateTree(b, dir, n)
	if shape != "plain" {
		script := "git init -q && printf '.tiny-agent/\\nnode_modules/\\n' > .gitignore && git add -A && git -c user.name=b -c user.email=b@b commit -qm gen"
		cmd := exec.Command("sh", "-c", script)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%v %s", err, out)
		}
	}
	if shape == "git+nm" {
		generateTree(b, filepath.Join(dir, "node_modules"), 30000)
	}
	benchTrees[key] = dir
	return dir
}

func benchSizes() []int {
	if s := os.Getenv("TINY_BENCH_SIZES"); s != "" {
		var out []int
		for _, f := range strings.Split(s, ",") {
			var n int
			fmt.Sscan(f, &n)
			out = append(out, n)
		}
		return out
	}
	return []int{1, 10000, 100000}
}

// openTracked opens a store of dir with tracking and waits for its
// baseline.
func openTracked(b *testing.B, dir string, opts Options) *Store {
	b.Helper()
	opts.MaxFiles = 1 << 20
	s, err := Open(dir, opts)
	if err != nil {
		b.Fatal(err)
	}
	s.Track(func(line string) { b.Log(line) })
	<-s.tr.ready
	return s
}

// BenchmarkBashCall is what checkpoints add to one bash call that changes
// `changed` files: the snapshot before it and the one after it (the
// command itself is not timed). tracked is the inotify path; scan is the
// fallback (the watch limit reached), which looks at the whole tree.
func BenchmarkBashCall(b *testing.B) {
	for _, shape := range benchShapes("plain", "git", "git+nm") {
		for _, n := range benchSizes() {
			for _, how := range []string{"tracked", "scan"} {
				for _, changed := range []int{10, 100} {
					if (how == "scan" || n == 1) && changed == 100 {
						continue
					}
					if changed > n {
						changed = n // the 1-file reference: its one file
					}
					name := fmt.Sprintf("%s/files=%d/%s/changed=%d", shape, n, how, changed)
					b.Run(name, func(b *testing.B) {
						dir := benchShape(b, shape, n)
						opts := Options{DisableGit: shape == "plain"}
						if how == "scan" {
							opts.MaxWatches = 1
						}
						s := openTracked(b, dir, opts)
						defer s.Close()
						ctx := context.Background()
						s.Snapshot(ctx)
						b.ResetTimer()
						for i := 0; i < b.N; i++ {
							if rec := s.Snapshot(ctx); rec.Missing != "" {
								b.Fatal(rec.Missing)
							}
							b.StopTimer()
							for j := 0; j < changed; j++ {
								p := filepath.Join(dir, benchFile((i*changed+j)%n))
								os.WriteFile(p, []byte(fmt.Sprintf("changed %d %d\n", i, j)), 0o644)
							}
							b.StartTimer()
							if rec := s.Snapshot(ctx); rec.Missing != "" {
								b.Fatal(rec.Missing)
							}
						}
					})
				}
			}
		}
	}
}

// BenchmarkTrackStart is what opening a store and starting its tracking
// costs before the first prompt (open), and how long the background
// baseline takes until the first effect may run (baseline-ms).
func BenchmarkTrackStart(b *testing.B) {
	for _, shape := range benchShapes("plain", "git", "git+nm") {
		for _, n := range benchSizes() {
			b.Run(fmt.Sprintf("%s/files=%d", shape, n), func(b *testing.B) {
				dir := benchShape(b, shape, n)
				b.ResetTimer() // making the tree is not the start
				var baseline time.Duration
				var fresh, resumed [2]int64 // total ms, count
				for i := 0; i < b.N; i++ {
					b.StopTimer()
					if i%2 == 0 {
						// Every other start is a fresh store, the others
						// resume a directory that has one.
						os.RemoveAll(filepath.Join(dir, ".tiny-agent"))
					}
					b.StartTimer()
					began := time.Now()
					s, err := Open(dir, Options{DisableGit: shape == "plain", MaxFiles: 1 << 20})
					if err != nil {
						b.Fatal(err)
					}
					s.Track(nil)
					b.StopTimer()
					<-s.tr.ready
					took := time.Since(began)
					baseline += took
					if i%2 == 0 {
						fresh[0], fresh[1] = fresh[0]+took.Milliseconds(), fresh[1]+1
					} else {
						resumed[0], resumed[1] = resumed[0]+took.Milliseconds(), resumed[1]+1
					}
					s.Close()
					b.StartTimer()
				}
				b.ReportMetric(float64(baseline.Milliseconds())/float64(b.N), "baseline-ms")
				b.ReportMetric(float64(fresh[0])/float64(max(fresh[1], 1)), "fresh-baseline-ms")
				if resumed[1] > 0 {
					b.ReportMetric(float64(resumed[0])/float64(resumed[1]), "resumed-baseline-ms")
				}
			})
		}
	}
}

// BenchmarkRewindOneTurn rewinds one bash call that changed 100 files of
// the tree (plan and apply), with tracking on.
func BenchmarkRewindOneTurn(b *testing.B) {
	for _, shape := range benchShapes("plain", "git") {
		for _, n := range benchSizes() {
			if n < 100 {
				continue
			}
			b.Run(fmt.Sprintf("%s/files=%d/changed=100", shape, n), func(b *testing.B) {
				dir := benchShape(b, shape, n)
				s := openTracked(b, dir, Options{DisableGit: shape == "plain"})
				defer s.Close()
				ctx := context.Background()
				b.ResetTimer() // making the tree and its baseline is not the rewind
				for i := 0; i < b.N; i++ {
					b.StopTimer()
					idx := &strings.Builder{}
					r := NewRecorder(s, idx)
					after := r.BeforeEffect(ctx, fmt.Sprintf("t%d", i), "bash", jsontext.Value(`{}`))
					for j := 0; j < 100; j++ {
						p := filepath.Join(dir, benchFile((i*100+j)%n))
						os.WriteFile(p, []byte(fmt.Sprintf("rewound %d %d\n", i, j)), 0o644)
						os.Chmod(p, 0o755)
					}
					after()
					recs, err := ReadIndex(strings.NewReader(idx.String()))
					if err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
					plan, err := s.PlanRewind(ctx, recs, false)
					if err != nil {
						b.Fatal(err)
					}
					sum, _, err := s.Apply(ctx, plan, false)
					if err != nil {
						b.Fatal(err)
					}
					if len(sum.Restored) != 100 {
						b.Fatalf("restored %d files, want 100: %+v", len(sum.Restored), sum)
					}
				}
			})
		}
	}
}

// BenchmarkCheckpointBytes is what the store grows by per tracked
// checkpoint over a long session: 1,024 commands that each change 10
// files spread over the tree (content and manifests; skip deltas write
// bigger manifests at powers of two, amortised here). B/checkpoint is the
// mean, max-B the biggest single checkpoint.
func BenchmarkCheckpointBytes(b *testing.B) {
	for _, shape := range benchShapes("plain", "git") {
		for _, n := range benchSizes() {
			if n < 100 {
				continue
			}
			b.Run(fmt.Sprintf("%s/files=%d", shape, n), func(b *testing.B) {
				dir := benchShape(b, shape, n)
				s := openTracked(b, dir, Options{DisableGit: shape == "plain"})
				defer s.Close()
				ctx := context.Background()
				b.ResetTimer()
				var total, most int64
				const calls = 1024
				for i := 0; i < b.N; i++ {
					for c := 0; c < calls; c++ {
						for j := 0; j < 10; j++ {
							p := filepath.Join(dir, benchFile((c*7919+j*104729)%n))
							os.WriteFile(p, []byte(fmt.Sprintf("%d %d %d\n", i, c, j)), 0o644)
						}
						rec := s.Snapshot(ctx)
						if rec.Missing != "" {
							b.Fatal(rec.Missing)
						}
						total += rec.Bytes
						most = max(most, rec.Bytes)
					}
				}
				b.ReportMetric(float64(total)/float64(b.N*calls), "B/checkpoint")
				b.ReportMetric(float64(most), "max-B")
			})
		}
	}
}

// benchShapes is shapes without the git ones when git is not installed.
func benchShapes(shapes ...string) []string {
	if _, err := exec.LookPath("git"); err != nil {
		return shapes[:1] // "plain"
	}
	return shapes
}
