package cli

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tiny-agent/tiny-go/internal/providertest"
	"github.com/tiny-agent/tiny-go/internal/testenv"
)

// BenchmarkLostWork times whole tiny-go processes (the real binary, built
// once) against the scripted model in trees of TINY_BENCH_SIZES files
// (default 1 and 100000), plain and git, each iteration on a fresh store:
//
//   - noeffect-ms: a one-shot run whose answer has no tool call;
//   - firstcmd-ms: a one-shot run whose first step is bash `true`;
//   - step-ms: per bash step of a resumed one-shot run of 20 steps, each
//     writing one file;
//   - rewind-ms: `session rewind --turn 2 --files-only` of that turn;
//   - nm-rm-ms: a resumed one-shot run whose one step deletes a
//     3,000-file node_modules (git-ignored in the git tree), minus the
//     same run with bash `true` in its place.
//
// Each runs with commands over an overlay (overlay) and on the watcher
// fallback (watch, TINY_OVERLAY=off). The figures are read against the
// 1-file tree of the same run (docs/performance.md, section 21).
func BenchmarkLostWork(b *testing.B) {
	bin := testenv.TinyGo(b)
	srv, err := providertest.Start("127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	sizes := []int{1, 100000}
	if s := os.Getenv("TINY_BENCH_SIZES"); s != "" {
		sizes = nil
		for _, f := range strings.Split(s, ",") {
			n, _ := strconv.Atoi(f)
			sizes = append(sizes, n)
		}
	}
	for _, shape := range []string{"plain", "git"} {
		for _, n := range sizes {
			b.Run(fmt.Sprintf("%s/files=%d", shape, n), func(b *testing.B) {
				dir := b.TempDir()
				benchTree(b, dir, n, shape == "git")
				for _, path := range []string{"overlay", "watch"} {
					b.Run(path, func(b *testing.B) {
						r := &procRun{b: b, bin: bin, srv: srv, dir: dir}
						if path == "watch" {
							r.env = []string{"TINY_OVERLAY=off"}
						}
						benchLostWork(b, r)
					})
				}
			})
		}
	}
}

// benchLostWork runs the five measures b.N times on a fresh store each.
func benchLostWork(b *testing.B, r *procRun) {
	dir := r.dir
	var m, cpu [5]time.Duration
	add := func(i int, t procTime, div time.Duration) {
		m[i] += t.wall / div
		cpu[i] += t.cpu / div
	}
	for range b.N {
		os.RemoveAll(filepath.Join(dir, ".tiny-agent"))
		add(0, r.run(nil, "hello"), 1)
		os.RemoveAll(filepath.Join(dir, ".tiny-agent"))
		add(1, r.run([]string{"true"}, "first"), 1)
		id := r.sessionID()
		steps := make([]string, 20)
		for i := range steps {
			steps[i] = fmt.Sprintf("echo %d > step%02d.txt", i, i)
		}
		add(2, r.run(steps, "--session", id, "twenty steps"), 20)
		add(3, r.exec("session", "rewind", id, "--turn", "2", "--files-only"), 1)
		if _, err := os.Stat(filepath.Join(dir, "step00.txt")); err == nil {
			b.Fatal("the rewind left step00.txt")
		}
		benchNodeModules(b, dir)
		idle := r.run([]string{"true"}, "--session", id, "nothing")
		rm := r.run([]string{"rm -rf node_modules"}, "--session", id, "delete node_modules")
		add(4, procTime{rm.wall - idle.wall, rm.cpu - idle.cpu}, 1)
	}
	for i, name := range []string{"noeffect", "firstcmd", "step", "rewind", "nm-rm"} {
		b.ReportMetric(float64(m[i].Microseconds())/1000/float64(b.N), name+"-ms")
		b.ReportMetric(float64(cpu[i].Microseconds())/1000/float64(b.N), name+"-cpu-ms")
	}
}

// benchTree writes n files (0.5–4 KiB, 700 directories); git commits
// them and ignores node_modules (benchNodeModules).
func benchTree(b *testing.B, dir string, n int, git bool) {
	b.Helper()
	for i := range n {
		p := filepath.Join(dir, fmt.Sprintf("pkg%02d/sub%d/file%05d.go", i%100, i%7, i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(strings.Repeat(fmt.Sprintf("// line of file %d\n", i), 25+i%200)), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	if git {
		cmd := exec.Command("sh", "-c", "git init -q && git config gc.auto 0 && printf 'node_modules/\\n' > .gitignore && git add -A && git -c user.name=b -c user.email=b@b commit -qm gen")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%v %s", err, out)
		}
	}
}

func benchNodeModules(b *testing.B, dir string) {
	b.Helper()
	for i := range 3000 {
		p := filepath.Join(dir, "node_modules", fmt.Sprintf("pkg%03d/lib/f%04d.js", i%150, i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(strings.Repeat("module.exports = 1;\n", 10+i%40)), 0o644); err != nil {
			b.Fatal(err)
		}
	}
}

// procRun runs the built binary in dir against the scripted model.
type procRun struct {
	b        *testing.B
	bin, dir string
	srv      *providertest.Server
	env      []string // extra environment
}

// procTime is a process's wall time and the CPU time of it and the
// children it waited for (git, the commands): the CPU figure suffers less
// from a loaded machine.
type procTime struct{ wall, cpu time.Duration }

// run enqueues one bash call per command and an answer, and times one
// one-shot process.
func (r *procRun) run(cmds []string, args ...string) procTime {
	for i, c := range cmds {
		r.srv.Enqueue(providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("b"+strconv.Itoa(i), "bash", `{"command":`+strconv.Quote(c)+`}`)}})
	}
	r.srv.Enqueue(providertest.Reply{Text: "done"})
	return r.exec(args...)
}

func (r *procRun) exec(args ...string) procTime {
	cmd := exec.Command(r.bin, append([]string{"--cwd", r.dir}, args...)...)
	cmd.Env = append(os.Environ(), "OPENROUTER_API_KEY=test-key", "OTEL_SDK_DISABLED=true", "TINY_ENDPOINT="+r.srv.URL())
	cmd.Env = append(cmd.Env, r.env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	began := time.Now()
	err := cmd.Run()
	wall := time.Since(began)
	if err != nil {
		r.b.Fatalf("tiny-go %v: %v\n%s", args, err, stderr.String())
	}
	if r.srv.Pending() != 0 {
		r.b.Fatalf("tiny-go %v left %d replies unused\n%s", args, r.srv.Pending(), stderr.String())
	}
	return procTime{wall, cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()}
}

func (r *procRun) sessionID() string {
	m, _ := filepath.Glob(filepath.Join(r.dir, ".tiny-agent", "sessions", "*.jsonl"))
	if len(m) != 1 {
		r.b.Fatalf("%d sessions", len(m))
	}
	name := filepath.Base(m[0])
	return strings.TrimSuffix(name[strings.IndexByte(name, '_')+1:], ".jsonl")
}
