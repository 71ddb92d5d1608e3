//go:build amd64 || arm64

package sandbox

import (
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/tiny-agent/tiny-go/internal/journal"
)

// BenchmarkTrappedStart is what journaling adds to a command's start:
// /bin/true through Start (the static init; the Go init) and through
// StartTrapped + journal.Attach + Stop (the static init; the Go init), in wall
// time and in the command's own CPU time; and to a command that makes
// 200 files and appends to them (each a trapped open, with the checks of
// Options.Exclude).
func BenchmarkTrappedStart(b *testing.B) {
	if ABI() == 0 {
		b.Skip("needs Landlock")
	}
	work := b.TempDir()
	filter, err := journal.Filter()
	if err != nil {
		b.Fatal(err)
	}
	files := `for i in $(seq 200); do echo $i > f$i; echo $i >> f$i; done; rm -f f*`
	for _, c := range []struct {
		name         string
		goInit, trap bool
		script       string
	}{{"start", false, false, ""}, {"start(go-init)", true, false, ""}, {"trapped", false, true, ""}, {"trapped(go-init)", true, true, ""},
		{"files/start", false, false, files}, {"files/trapped", false, true, files}} {
		b.Run(c.name, func(b *testing.B) {
			s := benchSandbox(b, work, c.goInit)
			var cpu time.Duration
			for b.Loop() {
				cmd := exec.Command("/bin/true")
				if c.script != "" {
					cmd = exec.Command("/bin/bash", "-c", c.script)
				}
				cmd.Dir = work
				if !c.trap {
					if err := s.Start(cmd); err != nil {
						b.Fatal(err)
					}
					if err := cmd.Wait(); err != nil {
						b.Fatal(err)
					}
				} else {
					trapOnce(b, s, cmd, filter, work, filepath.Join(work, ".tiny-agent", "j", time.Now().Format("150405.000000000")))
				}
				cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
			}
			b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/op")
		})
	}
}

func trapOnce(b *testing.B, s *Sandbox, cmd *exec.Cmd, filter []byte, tree, jdir string) {
	l, err := s.StartTrapped(cmd, filter)
	if err != nil {
		b.Fatal(err)
	}
	sup, err := journal.Attach(l, tree, jdir, journal.Options{Exclude: s.JournalExclude(tree), Writable: s.MayWrite})
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		b.Fatal(err)
	}
	if err := sup.Stop(); err != nil {
		b.Fatal(err)
	}
}
