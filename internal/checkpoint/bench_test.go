package checkpoint

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"
)

// generateTree writes files files in 700 directories, 0.5–4 KiB each, the
// shape of a mid-sized repository.
func generateTree(b *testing.B, dir string, files int) {
	b.Helper()
	for i := 0; i < files; i++ {
		p := filepath.Join(dir, benchFile(i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		body := strings.Repeat(fmt.Sprintf("// line of file %d\n", i), 25+i%200)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			b.Fatal(err)
		}
	}
}

func benchFile(i int) string { return fmt.Sprintf("pkg%02d/sub%d/file%05d.go", i%100, i%7, i) }

func benchRepo(b *testing.B, git bool) string {
	b.Helper()
	dir := b.TempDir()
	generateTree(b, dir, 10000)
	if git {
		cmd := exec.Command("sh", "-c", "git init -q && echo .tiny-agent/ > .gitignore && git add -A && git -c user.name=b -c user.email=b@b commit -qm gen")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%v %s", err, out)
		}
	}
	return dir
}

func benchModes(b *testing.B) []string {
	if _, err := exec.LookPath("git"); err != nil {
		return []string{"plain"}
	}
	return []string{"git", "plain"}
}

// BenchmarkSnapshot10k is the checkpoint cost before a bash command in a
// working tree of 10,000 files: the first snapshot of a fresh store and an
// incremental one after a command changed five files.
func BenchmarkSnapshot10k(b *testing.B) {
	for _, mode := range benchModes(b) {
		dir := benchRepo(b, mode == "git")
		opts := Options{DisableGit: mode != "git"}
		b.Run(mode+"/first", func(b *testing.B) {
			var cpu time.Duration
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				os.RemoveAll(filepath.Join(dir, ".tiny-agent"))
				s, err := Open(dir, opts)
				if err != nil {
					b.Fatal(err)
				}
				c0 := cpuTime()
				b.StartTimer()
				if rec := s.Snapshot(context.Background()); rec.Missing != "" {
					b.Fatal(rec.Missing)
				}
				b.StopTimer()
				cpu += cpuTime() - c0
				b.StartTimer()
			}
			b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
		})
		b.Run(mode+"/incremental", func(b *testing.B) {
			s, err := Open(dir, opts)
			if err != nil {
				b.Fatal(err)
			}
			s.Snapshot(context.Background())
			var cpu time.Duration
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				for j := 0; j < 5; j++ {
					os.WriteFile(filepath.Join(dir, benchFile(i*5+j)), []byte(fmt.Sprintf("changed %d %d\n", i, j)), 0o644)
				}
				c0 := cpuTime()
				b.StartTimer()
				if rec := s.Snapshot(context.Background()); rec.Missing != "" {
					b.Fatal(rec.Missing)
				}
				b.StopTimer()
				cpu += cpuTime() - c0
				b.StartTimer()
			}
			// CPU time (this process and git's) does not grow with the
			// machine's load the way wall time does.
			b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
		})
	}
}

// BenchmarkTaskDisk runs a task of 30 tool calls through the recorder
// (edits, writes and commands that each change a file or two of the
// 10,000-file tree, before and after snapshots) and reports the store's
// growth per checkpoint.
func BenchmarkTaskDisk(b *testing.B) {
	for _, mode := range benchModes(b) {
		dir := benchRepo(b, mode == "git")
		b.Run(mode, func(b *testing.B) {
			var perCheckpoint float64
			for i := 0; i < b.N; i++ {
				os.RemoveAll(filepath.Join(dir, ".tiny-agent"))
				s, err := Open(dir, Options{DisableGit: mode != "git"})
				if err != nil {
					b.Fatal(err)
				}
				s.Snapshot(context.Background()) // the store exists before the task
				base := s.size()
				r := NewRecorder(s, &strings.Builder{})
				n := 0
				for step := 0; step < 30; step++ {
					target := filepath.Join(dir, benchFile(step))
					tool := []string{"edit", "write", "bash"}[step%3]
					after := r.BeforeEffect(context.Background(), fmt.Sprintf("t%d", step), tool, jsontext.Value(`{"path":"`+target+`"}`))
					data, _ := os.ReadFile(target)
					os.WriteFile(target, append(data, fmt.Sprintf("// step %d\n", step)...), 0o644)
					if tool == "bash" {
						os.WriteFile(filepath.Join(dir, fmt.Sprintf("pkg00/new%d.txt", step)), []byte("generated\n"), 0o644)
					}
					after()
					n += 2
				}
				perCheckpoint = float64(s.size()-base) / float64(n)
			}
			b.ReportMetric(perCheckpoint, "bytes/checkpoint")
		})
	}
}

// cpuTime is the user and system time of this process and its waited-for
// children.
func cpuTime() time.Duration {
	var total time.Duration
	for _, who := range []int{syscall.RUSAGE_SELF, syscall.RUSAGE_CHILDREN} {
		var ru syscall.Rusage
		if syscall.Getrusage(who, &ru) == nil {
			total += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		}
	}
	return total
}
