package cli

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tiny-agent/tiny-go/internal/providertest"
)

// BenchmarkBashStepsOverlay is a one-shot run of 20 bash steps (each
// writes one file), per step, with commands journaled on the tree (the
// default), over an overlay (TINY_TX=overlay) and on the watcher path
// (TINY_OVERLAY=off), in a tree of TINY_BENCH_FILES files (default 1),
// plain or git.
func BenchmarkBashStepsOverlay(b *testing.B) {
	n := 1
	if v := os.Getenv("TINY_BENCH_FILES"); v != "" {
		n, _ = strconv.Atoi(v)
	}
	const steps = 20
	for _, kind := range []string{"plain", "git"} {
		dir := b.TempDir()
		for i := range n {
			d := filepath.Join(dir, fmt.Sprintf("d%d", i/1000))
			os.MkdirAll(d, 0o755)
			os.WriteFile(filepath.Join(d, fmt.Sprintf("f%d.txt", i)), []byte("x\n"), 0o644)
		}
		if kind == "git" {
			cmd := exec.Command("sh", "-c", "git init -q && echo .tiny-agent/ > .gitignore && git add -A && git -c user.email=b@b -c user.name=b commit -qm seed")
			cmd.Dir = dir
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("%v %s", err, out)
			}
		}
		// The tree's writeback must not land in the steps measured.
		syscall.Sync()
		for _, mode := range []string{"journal", "overlay", "watcher"} {
			b.Run(fmt.Sprintf("%s/files=%d/%s", kind, n, mode), func(b *testing.B) {
				for b.Loop() {
					var replies []providertest.Reply
					for i := range steps {
						replies = append(replies, providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall(fmt.Sprintf("c%d", i), "bash", fmt.Sprintf(`{"command":"echo %d > step.txt"}`, i))}})
					}
					srv := providertest.New(b, append(replies, providertest.Reply{Text: "done"})...)
					env := map[string]string{"OPENROUTER_API_KEY": "k", "OTEL_SDK_DISABLED": "true", "TINY_ENDPOINT": srv.URL()}
					switch mode {
					case "watcher":
						env["TINY_OVERLAY"] = "off"
					case "overlay":
						env["TINY_TX"] = "overlay"
					}
					var out, errb strings.Builder
					if code := Main([]string{"--cwd", dir, "go"}, strings.NewReader(""), &out, &errb, func(k string) string { return env[k] }); code != 0 {
						b.Fatalf("exit %d: %s", code, errb.String())
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*steps)/1e6, "ms/step")
			})
		}
	}
}

// BenchmarkNodeModulesOverlay: a one-shot run whose one bash step deletes
// a 3,000-file node_modules over the overlay (the originals move into the
// store by one rename), and the rewind that puts it back (each file
// copied back from the store).
func BenchmarkNodeModulesOverlay(b *testing.B) {
	if os.Geteuid() != 0 {
		b.Skip("commands over an overlay need root here")
	}
	var run, rewind float64
	for b.Loop() {
		b.StopTimer()
		dir := b.TempDir()
		for i := range 3000 {
			d := filepath.Join(dir, "node_modules", fmt.Sprintf("p%d", i/30))
			os.MkdirAll(d, 0o755)
			os.WriteFile(filepath.Join(d, fmt.Sprintf("f%d.js", i)), []byte("module.exports = 1\n"), 0o644)
		}
		srv := providertest.New(b,
			providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c1", "bash", `{"command":"rm -rf node_modules"}`)}},
			providertest.Reply{Text: "done"},
		)
		env := map[string]string{"OPENROUTER_API_KEY": "k", "OTEL_SDK_DISABLED": "true", "TINY_ENDPOINT": srv.URL()}
		getenv := func(k string) string { return env[k] }
		b.StartTimer()
		t0 := time.Now()
		var out, errb strings.Builder
		if code := Main([]string{"--cwd", dir, "go"}, strings.NewReader(""), &out, &errb, getenv); code != 0 {
			b.Fatalf("exit %d: %s", code, errb.String())
		}
		t1 := time.Now()
		sessions, _ := filepath.Glob(filepath.Join(dir, ".tiny-agent", "sessions", "*.jsonl"))
		name := filepath.Base(sessions[0])
		id := strings.TrimSuffix(name[strings.IndexByte(name, '_')+1:], ".jsonl")
		if code := Main([]string{"--cwd", dir, "session", "rewind", id, "--turn", "1", "--files-only"}, strings.NewReader(""), &out, &errb, getenv); code != 0 {
			b.Fatalf("rewind: exit %d: %s", code, errb.String())
		}
		run += float64(t1.Sub(t0).Milliseconds())
		rewind += float64(time.Since(t1).Milliseconds())
		if _, err := os.Stat(filepath.Join(dir, "node_modules", "p99", "f2999.js")); err != nil {
			b.Fatalf("not put back: %v", err)
		}
	}
	b.ReportMetric(run/float64(b.N), "run-ms")
	b.ReportMetric(rewind/float64(b.N), "rewind-ms")
}
