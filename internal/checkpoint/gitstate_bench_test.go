package checkpoint

import (
	"context"
	"fmt"
	"os/exec"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/checkpoint/checkpointtest"
)

// BenchmarkGitState times what recording the git state adds to a
// command's checkpoint, in a repository of 1 or 1,000 refs (branches and
// tags): unchanged (the stat fingerprint), and after a command moved a
// branch (for-each-ref, the index kept, the dropped commit kept alive).
func BenchmarkGitState(b *testing.B) {
	if _, err := exec.LookPath("git"); err != nil {
		b.Skip("no git")
	}
	for _, refs := range []int{1, 1000} {
		dir := b.TempDir()
		checkpointtest.Sh(b, dir, fmt.Sprintf(`git init -q -b main && echo .tiny-agent/ > .gitignore && echo a > a && git add -A && git commit -qm one &&
echo b > a && git commit -qam two && for i in $(seq 2 %d); do echo "create refs/heads/b$i HEAD"; done | git update-ref --stdin`, refs))
		s, err := Open(dir, Options{})
		if err != nil {
			b.Fatal(err)
		}
		ctx := context.Background()
		b.Run(fmt.Sprintf("refs=%d/unchanged", refs), func(b *testing.B) {
			rec := Record{}
			s.recordGit(ctx, &rec)
			for range b.N {
				if s.recordGit(ctx, &rec) == nil {
					b.Fatal("no git state")
				}
			}
		})
		tips := []string{gitOut(b, dir, "rev-parse", "HEAD~1"), gitOut(b, dir, "rev-parse", "HEAD")}
		moves := 0
		b.Run(fmt.Sprintf("refs=%d/branch-moved", refs), func(b *testing.B) {
			for range b.N {
				b.StopTimer()
				rec := Record{}
				before := s.recordGit(ctx, &rec)
				moves++
				checkpointtest.Sh(b, dir, "git reset -q --soft "+tips[moves%2])
				b.StartTimer()
				after := s.recordGit(ctx, &rec)
				s.keepDropped(ctx, before, after)
			}
		})
		s.Close()
	}
}
