package cli

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRewindAfterKillBeforeStates: tiny-go killed after a command's apply
// but before its states.json and after record were written: the next
// rewind still removes what the command created and brings back what it
// deleted.
func TestRewindAfterKillBeforeStates(t *testing.T) {
	seed := `mkdir -p keep && echo k > keep/k && echo gone > gone.txt`
	tt := runTxTurnThen(t, seed, func(dir, _ string) {
		states, _ := filepath.Glob(filepath.Join(dir, ".tiny-agent", "checkpoints", "tx", "*", "states.json"))
		if len(states) != 1 {
			t.Fatalf("%d states files", len(states))
		}
		os.Remove(states[0])
		idx, _ := filepath.Glob(filepath.Join(dir, ".tiny-agent", "sessions", "*.d", "checkpoints.jsonl"))
		if len(idx) != 1 {
			t.Fatalf("%d indexes", len(idx))
		}
		data, err := os.ReadFile(idx[0])
		if err != nil {
			t.Fatal(err)
		}
		var kept []string
		for line := range strings.Lines(string(data)) {
			if !strings.Contains(line, `"tx"`) || !strings.Contains(line, `"after"`) {
				kept = append(kept, line)
			}
		}
		if len(kept) == len(strings.Split(strings.TrimSpace(string(data)), "\n")) {
			t.Fatalf("no after record of a transaction in\n%s", data)
		}
		os.WriteFile(idx[0], []byte(strings.Join(kept, "")), 0o600)
	}, "mkdir -p made/deep && for i in $(seq 1 50); do echo $i > made/deep/f$i; done && echo new > new.txt && rm gone.txt")
	if d := listingDiff(tt.rewound, tt.before); d != "" {
		t.Fatalf("the rewind did not give the tree back:\n%s\nrewind said:\n%s", d, tt.rewindOut)
	}
}

// TestRewindKilledMidwayIsFinishedByTheNext: a rewind of a transaction
// killed after n of its paths is finished exactly by the next one (the
// tree as before the turn), and nothing is left that breaks a later one.
func TestRewindKilledMidwayIsFinishedByTheNext(t *testing.T) {
	seed := `mkdir -p keep/sub && echo k > keep/k && echo gone > gone.txt && mkdir -p old/deep && echo o > old/deep/o`
	turn := "mkdir -p made/deep && for i in $(seq 1 20); do echo $i > made/deep/f$i; done && echo new > new.txt && rm -r gone.txt old && echo changed > keep/k"
	for _, n := range []int{1, 5, 21, 24} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			tt := runTxTurnThen(t, seed, func(dir, home string) { killRewindAfter(t, dir, home, n) }, turn)
			if d := listingDiff(tt.rewound, tt.before); d != "" {
				t.Fatalf("the rewind after the killed one did not give the tree back:\n%s\nrewind said:\n%s", d, tt.rewindOut)
			}
		})
	}
}

// killRewindAfter starts the rewind of the first turn of dir's session
// as the user of home (the one whose key sealed the turn's state),
// SIGKILLs it once it has put back n paths and waits for it.
func killRewindAfter(t *testing.T, dir, home string, n int) {
	t.Helper()
	sessions, _ := filepath.Glob(filepath.Join(dir, ".tiny-agent", "sessions", "*.jsonl"))
	if len(sessions) != 1 {
		t.Fatalf("%d sessions", len(sessions))
	}
	name := filepath.Base(sessions[0])
	id := strings.TrimSuffix(name[strings.IndexByte(name, '_')+1:], ".jsonl")
	paused := filepath.Join(t.TempDir(), "paused")
	cmd := exec.Command(programAs(t, "tiny-go-rewind-pause"), "--cwd", dir, "session", "rewind", id, "--turn", "1", "--files-only")
	cmd.Env = []string{childEnv + "=1", "OTEL_SDK_DISABLED=true", "HOME=" + home, "PATH=" + os.Getenv("PATH"),
		"GIT_CONFIG_NOSYSTEM=1", rewindPauseEnv + "=" + fmt.Sprint(n) + ":" + paused}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	deadline := time.After(30 * time.Second)
	for {
		if _, err := os.Stat(paused); err == nil {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("the rewind ended before %d paths: %v", n, err)
		case <-deadline:
			cmd.Process.Kill()
			t.Fatal("the rewind never paused")
		case <-time.After(5 * time.Millisecond):
		}
	}
	cmd.Process.Kill()
	<-done
}
