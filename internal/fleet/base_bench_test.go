package fleet

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tiny-agent/tiny-go/internal/providertest"
)

// taskFolder packs an eval task whose fixture has n files of 1 KB, as
// `tiny-go eval --temporal` uploads it.
func taskFolder(b *testing.B, n int) []byte {
	task := b.TempDir()
	makeTree(b, filepath.Join(task, "fixture"), n)
	for name, body := range map[string]string{"prompt.txt": "fleet task 01\n", "test.sh": "true\n"} {
		if err := os.WriteFile(filepath.Join(task, name), []byte(body), 0o755); err != nil {
			b.Fatal(err)
		}
	}
	data, err := packDir(task, nil)
	if err != nil {
		b.Fatal(err)
	}
	return data
}

// BenchmarkBuildBase builds the cached base of an eval task of 20,000
// files on a cold worker: the task folder from the store unpacked, its
// fixture made a git repository, tiny-go's first checkpoint seeded; with
// the worker's cache on the disk (--cache-memory off) and as a worker
// starts by default (--cache-memory auto: a tmpfs where it may mount).
//
//	go test -run '^$' -bench BenchmarkBuildBase -benchtime 3x ./internal/fleet
func BenchmarkBuildBase(b *testing.B) {
	ctx := context.Background()
	blobs, err := OpenBlobs(ctx, "file://"+b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	if err := blobs.Put(ctx, "task", taskFolder(b, 20000)); err != nil {
		b.Fatal(err)
	}
	for _, mode := range []string{cacheOff, cacheAuto} {
		b.Run("cache="+mode, func(b *testing.B) {
			a := &Activities{Blobs: blobs, WorkRoot: b.TempDir()}
			cache := filepath.Join(a.WorkRoot, cacheDir)
			b.Cleanup(func() { unmount(cache) })
			if a.CacheInMemory, err = prepareCache(cache, mode, os.Stderr); err != nil {
				b.Fatal(err)
			}
			if mode == cacheAuto && !a.CacheInMemory {
				b.Skip("the cache could not be mounted in memory")
			}
			for i := 0; b.Loop(); i++ {
				_, err := a.bases().entry(ctx, strconv.Itoa(i), func() int64 { return a.baseNeeds(ctx, Source{EvalTask: "task"}) }, func(dir string) error {
					if err := a.materialize(ctx, Source{EvalTask: "task"}, "t", dir); err != nil {
						return err
					}
					return seedCheckpoints(ctx, filepath.Join(dir, "repo"))
				})
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkAgentStep runs the real tiny-go, as a worker does, in a
// workspace laid out from a cached base of 1 and of 20,000 files: one
// task of 3 bash steps against the scripted model, its commands as
// transactions (tx=true) or on the watcher fallback (tx=false). The
// difference per step is what a big tree costs tiny-go itself.
//
//	go test -run '^$' -bench BenchmarkAgentStep -benchtime 5x ./internal/fleet
func BenchmarkAgentStep(b *testing.B) {
	bin := filepath.Join(b.TempDir(), "tiny-go")
	build := exec.Command("go", "build", "-o", bin, "./cmd/tiny-go")
	build.Dir = "../.."
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	model := providertest.New(b)
	model.Respond(threeSteps)
	// No background `git gc --auto` after the fixture's commit of 20,000
	// loose objects, still writing .git when the benchmark cleans up.
	b.Setenv("GIT_CONFIG_COUNT", "1")
	b.Setenv("GIT_CONFIG_KEY_0", "gc.auto")
	b.Setenv("GIT_CONFIG_VALUE_0", "0")
	for _, bc := range []struct {
		n  int
		tx bool
	}{{1, true}, {20000, true}, {1, false}, {20000, false}} {
		n := bc.n
		b.Run(fmt.Sprintf("files=%d/tx=%v", n, bc.tx), func(b *testing.B) {
			ctx := context.Background()
			blobs, err := OpenBlobs(ctx, "file://"+b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			if err := blobs.Put(ctx, "task", taskFolder(b, n)); err != nil {
				b.Fatal(err)
			}
			a := &Activities{Blobs: blobs, WorkRoot: b.TempDir(), TinyGo: bin, Env: os.Environ()}
			base := filepath.Join(a.WorkRoot, "base")
			if err := a.materialize(ctx, Source{EvalTask: "task"}, "t", base); err != nil {
				b.Fatal(err)
			}
			if err := seedCheckpoints(ctx, filepath.Join(base, "repo")); err != nil {
				b.Fatal(err)
			}
			var took time.Duration
			for i := 0; b.Loop(); i++ {
				b.StopTimer()
				root := filepath.Join(a.WorkRoot, strconv.Itoa(i))
				repo := filepath.Join(root, "repo")
				if _, err := layOut(ctx, filepath.Join(base, "repo"), root, repo); err != nil {
					b.Fatal(err)
				}
				cmd := exec.Command(bin, "--json", "--cwd", repo, "--approval", "auto", "--", "This is fleet task 01.")
				cmd.Dir = repo
				cmd.Env = a.agentEnv(Task{Key: "t", Settings: Settings{Endpoint: model.URL()}}, root, filepath.Join(root, "eval.log"))
				cmd.Env = append(cmd.Env, "TINY_API_KEY=fleet-bench-key", "TINY_MODEL=fleet/test")
				if !bc.tx {
					// The watcher fallback, as before the commands' layers
					// went beside the workspace.
					cmd.Env = append(cmd.Env, "TINY_OVERLAY=off")
				}
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				b.StartTimer()
				start := time.Now()
				err := cmd.Run()
				took += time.Since(start)
				b.StopTimer()
				marks, _ := os.ReadFile(filepath.Join(repo, "markers.txt"))
				unmount(repo)
				if strings.Count(string(marks), "step") != 3 {
					b.Fatalf("the three steps did not run: markers %q; tiny-go: %v: %s", marks, err, stderr.String())
				}
				if err != nil || (i == 0 && stderr.Len() > 0) {
					b.Logf("tiny-go: %v: %s", err, stderr.String())
				}
				b.StartTimer()
			}
			b.ReportMetric(float64(took.Milliseconds())/float64(b.N), "ms/task")
		})
	}
}

// threeSteps is the scripted model of BenchmarkAgentStep: three bash
// steps, each appending a line to a file, then an answer.
func threeSteps(r providertest.Request) providertest.Reply {
	done := 0
	for _, m := range r.Chat.Messages {
		if m.Role == "tool" && m.Content != nil && regexp.MustCompile(`done step \d`).MatchString(*m.Content) {
			done++
		}
	}
	if done >= 3 {
		return providertest.Reply{Text: "all three steps are done"}
	}
	args, _ := json.Marshal(map[string]string{"command": fmt.Sprintf(`echo "step %d" >> markers.txt && echo "done step %d"`, done+1, done+1)})
	return providertest.Reply{ToolCalls: []providertest.ToolCall{{ID: fmt.Sprintf("c%d", done+1), Name: "bash", Arguments: string(args)}}}
}
