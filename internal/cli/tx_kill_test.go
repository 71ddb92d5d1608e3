package cli

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tiny-agent/tiny-go/internal/checkpoint/checkpointtest"
	"github.com/tiny-agent/tiny-go/internal/providertest"
)

// TestKilledTurnOverOverlayIsRewound SIGKILLs tiny-go at random moments of
// a turn whose command changes and deletes many files over the overlay
// (while the command runs, while its upper layer is applied, after). A
// rewind of the turn then gives the tree back byte for byte: what the
// killed process left is first finished from its journal or applied from
// its upper layer, then undone.
func TestKilledTurnOverOverlayIsRewound(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills many processes")
	}
	const command = `for f in seed/*; do echo changed >> $f; done; rm -rf nm; mkdir -p new; for i in $(seq 200); do echo $i > new/n$i; done`
	prog := programAs(t, "tiny-go")
	var full time.Duration
	outcomes := map[string]int{}
	for iter := range 10 {
		srv := providertest.New(t,
			providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c1", "bash", fmt.Sprintf("{\"command\":%q}", command))}},
			providertest.Reply{Text: "done"},
		)
		dir := t.TempDir()
		for i := range 100 {
			os.MkdirAll(filepath.Join(dir, "seed"), 0o755)
			os.MkdirAll(filepath.Join(dir, "nm", fmt.Sprint("p", i%10)), 0o755)
			os.WriteFile(filepath.Join(dir, "seed", fmt.Sprint("f", i)), []byte(fmt.Sprintln("seed", i)), 0o644)
			os.WriteFile(filepath.Join(dir, "nm", fmt.Sprint("p", i%10), fmt.Sprint("m", i)), []byte("m\n"), 0o644)
		}
		before := checkpointtest.Listing(t, dir)
		run := func(args ...string) *exec.Cmd {
			cmd := exec.Command(prog, append([]string{"--cwd", dir}, args...)...)
			cmd.Env = append(os.Environ(), childEnv+"=1", "OTEL_SDK_DISABLED=true", "OPENROUTER_API_KEY=k", "TINY_ENDPOINT="+srv.URL())
			return cmd
		}
		turn := run("change everything")
		began := time.Now()
		if iter == 0 {
			// Uninterrupted: the time scale of the kills.
			if out, err := turn.CombinedOutput(); err != nil {
				t.Fatalf("%v %s", err, out)
			}
			full = time.Since(began)
		} else {
			if err := turn.Start(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(time.Duration(rand.Int64N(int64(full))))
			turn.Process.Signal(syscall.SIGKILL)
			turn.Wait()
		}
		outcomes[killedAt(dir)]++
		sessions, _ := filepath.Glob(filepath.Join(dir, ".tiny-agent", "sessions", "*.jsonl"))
		if len(sessions) == 1 {
			name := filepath.Base(sessions[0])
			id := strings.TrimSuffix(name[strings.IndexByte(name, '_')+1:], ".jsonl")
			if out, err := run("session", "rewind", id, "--turn", "1", "--files-only").CombinedOutput(); err != nil && !strings.Contains(string(out), "no user turn") {
				t.Fatalf("iteration %d: rewind: %v\n%s", iter, err, out)
			}
		}
		if d := listingDiff(checkpointtest.Listing(t, dir), before); d != "" {
			t.Fatalf("iteration %d: after the kill and the rewind:\n%s", iter, d)
		}
	}
	t.Logf("a whole turn %v; kills landed: %v", full, outcomes)
}

// killedAt says where the kill left the command's transaction.
func killedAt(dir string) string {
	pending, _ := filepath.Glob(filepath.Join(dir, ".tiny-agent", "checkpoints", "tx", "pending", "*"))
	if len(pending) == 0 {
		return "no transaction pending"
	}
	id := filepath.Base(pending[0])
	if _, err := os.Stat(filepath.Join(dir, ".tiny-agent", "checkpoints", "tx", id, "journal.json")); err == nil {
		return "during the apply"
	}
	return "during the command"
}

// A tiny-go killed while its command runs leaves the command's changes in
// the upper layer; the next tiny-go started in the directory applies them
// before anything else (as they would have landed without an overlay).
func TestNextStartAppliesAKilledCommandsChanges(t *testing.T) {
	marks := t.TempDir()
	command := fmt.Sprintf("echo made > made.txt && rm gone.txt && echo ran > %s/ran && sleep 60", marks)
	srv := providertest.New(t,
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c1", "bash", fmt.Sprintf("{\"command\":%q}", command))}},
		providertest.Reply{Text: "hello again"},
	)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "gone.txt"), []byte("gone\n"), 0o644)
	prog := programAs(t, "tiny-go")
	run := func(args ...string) *exec.Cmd {
		cmd := exec.Command(prog, append([]string{"--cwd", dir}, args...)...)
		// Over the overlay: its upper layer is what the next start applies.
		cmd.Env = append(os.Environ(), childEnv+"=1", "OTEL_SDK_DISABLED=true", "OPENROUTER_API_KEY=k", "TINY_ENDPOINT="+srv.URL(), "TINY_TX=overlay")
		return cmd
	}
	turn := run("make and delete")
	if err := turn.Start(); err != nil {
		t.Fatal(err)
	}
	waitFile(t, filepath.Join(marks, "ran"))
	turn.Process.Signal(syscall.SIGKILL)
	turn.Wait()
	if _, err := os.Stat(filepath.Join(dir, "made.txt")); err == nil {
		t.Fatal("the command wrote the tree itself")
	}
	if out, err := run("hello").CombinedOutput(); err != nil {
		t.Fatalf("the next start: %v\n%s", err, out)
	}
	if data, err := os.ReadFile(filepath.Join(dir, "made.txt")); err != nil || string(data) != "made\n" {
		t.Fatalf("made.txt: %q %v", data, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "gone.txt")); !os.IsNotExist(err) {
		t.Fatalf("gone.txt: %v", err)
	}
	if pending, _ := os.ReadDir(filepath.Join(dir, ".tiny-agent", "checkpoints", "tx", "pending")); len(pending) != 0 {
		t.Fatalf("still pending: %v", pending)
	}
}
