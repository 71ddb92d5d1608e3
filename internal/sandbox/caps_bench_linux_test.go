package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkCommandCost is the cost of one command through the sandbox
// with namespaces, as the model's bash calls pay it: a command that does
// nothing (/bin/true, through the static init and the Go one: the start)
// and one that makes system calls (`git status` in a tree of 1,000
// files: the filter, per call), in wall time and in the command's own CPU
// time (cpu-µs/op). docs/performance.md, section 30, reads it
// before and after the capability drop and the seccomp filter.
func BenchmarkCommandCost(b *testing.B) {
	if os.Geteuid() != 0 || ABI() == 0 {
		b.Skip("needs root and Landlock")
	}
	work := b.TempDir()
	for i := range 1000 {
		p := filepath.Join(work, fmt.Sprintf("d%02d/f%04d.txt", i%50, i))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(fmt.Sprintf("file %d\n", i)), 0o644)
	}
	git := exec.Command("sh", "-c", "git init -q && git add -A && git -c user.name=b -c user.email=b@b commit -qm b")
	git.Dir = work
	if out, err := git.CombinedOutput(); err != nil {
		b.Fatalf("%v %s", err, out)
	}
	for _, c := range []struct {
		name   string
		goInit bool
		argv   []string
	}{
		{"true", false, []string{"/bin/true"}},
		{"true(go-init)", true, []string{"/bin/true"}},
		{"git-status", false, []string{"git", "status", "--porcelain"}},
	} {
		b.Run(c.name, func(b *testing.B) {
			s := benchSandbox(b, work, c.goInit)
			var cpu time.Duration
			for b.Loop() {
				cmd := exec.Command(c.argv[0], c.argv[1:]...)
				cmd.Dir = work
				if err := s.Start(cmd); err != nil {
					b.Fatal(err)
				}
				if err := cmd.Wait(); err != nil {
					b.Fatal(err)
				}
				cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
			}
			// The command's own CPU time (the init's steps and the
			// program): what the load of a shared machine moves least.
			b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/op")
		})
	}
}

// benchSandbox is a workspace sandbox over work, started through the Go
// init alone when goInit; the benchmark skips where the kernel refuses
// namespaces.
func benchSandbox(b *testing.B, work string, goInit bool) *Sandbox {
	goInitOnly = goInit
	b.Cleanup(func() { goInitOnly = false })
	s, _, err := New(Policy{Mode: Workspace, WorkDir: work, Getenv: func(string) string { return "" }})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(s.Close)
	if !s.Namespaced() {
		b.Skip("the kernel refused namespaces")
	}
	return s
}
