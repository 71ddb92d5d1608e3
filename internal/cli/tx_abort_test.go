package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/tiny-agent/tiny-go/internal/providertest"
)

// TestAbortEndsTheWholeCommandLine: an abort (Esc, or a signal to
// tiny-go: the same path) in the middle of `sleep 5; touch after` ends
// the command's whole shell before the rest of its line runs: after is
// never made, in the tree or outside it. Repeated: the fault was a race
// (2 runs of 5 ran the next command).
func TestAbortEndsTheWholeCommandLine(t *testing.T) {
	runs := 20
	if testing.Short() {
		runs = 5
	}
	for i := range runs {
		out := t.TempDir()
		started := filepath.Join(out, "started")
		command := fmt.Sprintf("touch %s; sleep 5; echo >after; echo >%s/after", started, out)
		srv := providertest.New(t, providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c1", "bash", mustJSON(t, map[string]string{"command": command}))}})
		c := newCLI(t, srv)
		cmd := c.command(srv.URL(), "--cwd", c.dir, "run it")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(10 * time.Second)
		for {
			if _, err := os.Stat(started); err == nil {
				break
			}
			if time.Now().After(deadline) {
				cmd.Process.Kill()
				t.Fatal("the command never started")
			}
			time.Sleep(5 * time.Millisecond)
		}
		time.Sleep(time.Duration(i%5) * 10 * time.Millisecond) // somewhere in the sleep
		_ = cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
		time.Sleep(50 * time.Millisecond) // a straggler would have run by now
		for _, p := range []string{filepath.Join(c.dir, "after"), filepath.Join(out, "after")} {
			if _, err := os.Lstat(p); err == nil {
				t.Fatalf("run %d: the rest of the command line ran after the abort: %s exists", i+1, p)
			}
		}
	}
}
