package cli

import (
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/checkpoint/checkpointtest"
	"github.com/tiny-agent/tiny-go/internal/cli/rewindcmd"
	"github.com/tiny-agent/tiny-go/internal/providertest"
)

// A rewind killed midway (SIGKILL while paused after half of its paths):
// while it runs, `session list` says "rewind in progress"; afterwards each
// command that opens the session or its directory (session list, session
// show, --session, --continue) first finishes it from its journal, says
// so, and leaves the tree at the rewound turn.
func TestInterruptedRewindIsFinishedFirst(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills processes")
	}
	const n = 20
	srv := providertest.New(t,
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c1", "bash",
			`{"command":"for f in seed/*; do echo changed >> $f; done; mkdir -p new; for i in $(seq `+strconv.Itoa(n)+`); do echo $i > new/n$i; done"}`)}},
		providertest.Reply{Text: "done"},
	)
	c := newCLI(t, srv)
	for i := range n {
		c.write("seed/f"+strconv.Itoa(i), "seed "+strconv.Itoa(i)+"\n")
	}
	before := checkpointtest.TreeDigests(t, c.dir)
	if code, _, stderr := c.main("", "change everything"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	after := checkpointtest.TreeDigests(t, c.dir)
	afterFiles := map[string][]byte{}
	for p := range after {
		afterFiles[p], _ = os.ReadFile(filepath.Join(c.dir, p))
	}
	id := sessionID(t, c)
	sidecar := strings.TrimSuffix(c.sessions()[0], ".jsonl") + ".d"
	index := filepath.Join(sidecar, "checkpoints.jsonl")
	indexBytes := mustRead(t, index)
	total := 2 * n // n seed files to restore, n new files to delete

	paused := programAs(t, "tiny-go-rewind-pause")
	interrupt := func(t *testing.T) {
		for p, b := range afterFiles {
			os.MkdirAll(filepath.Dir(filepath.Join(c.dir, p)), 0o755)
			if err := os.WriteFile(filepath.Join(c.dir, p), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(index, indexBytes, 0o600); err != nil {
			t.Fatal(err)
		}
		pauseFile := filepath.Join(t.TempDir(), "paused")
		cmd := exec.Command(paused, "--cwd", c.dir, "session", "rewind", id, "--turn", "1", "--files-only")
		cmd.Env = append(os.Environ(), childEnv+"=1", "OTEL_SDK_DISABLED=true", rewindPauseEnv+"="+strconv.Itoa(total/2)+":"+pauseFile)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { cmd.Process.Kill(); cmd.Wait() }()
		waitFile(t, pauseFile)
		code, stdout, stderr := c.main("", "session", "list")
		if code != 0 || !strings.Contains(stdout, "rewind in progress") {
			t.Fatalf("session list during the rewind: %d\n%s%s", code, stdout, stderr)
		}
		if code, stdout, _ := c.main("", "session", "list", "--json"); code != 0 || !strings.Contains(stdout, `"state": "rewind in progress"`) {
			t.Fatalf("session list --json during the rewind: %d\n%s", code, stdout)
		}
		_ = cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		if got := checkpointtest.TreeDigests(t, c.dir); maps.Equal(got, before) || maps.Equal(got, after) {
			t.Fatal("the kill did not land midway")
		}
		if _, err := os.Stat(filepath.Join(sidecar, rewindcmd.JournalFile)); err != nil {
			t.Fatalf("no journal: %v", err)
		}
	}
	for _, args := range [][]string{
		{"session", "list"},
		{"session", "show", id},
		{"--session", id},
		{"--continue"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			interrupt(t)
			code, stdout, stderr := c.main("", args...)
			if code != 0 || !strings.Contains(stderr, "finished an interrupted rewind of session "+id+" to before turn 1") {
				t.Fatalf("%v: %d\n%s%s", args, code, stdout, stderr)
			}
			if got := checkpointtest.TreeDigests(t, c.dir); !maps.Equal(got, before) {
				t.Fatalf("%v: the tree is not at turn 1", args)
			}
			if _, err := os.Stat(filepath.Join(sidecar, rewindcmd.JournalFile)); err == nil {
				t.Fatal("the journal is left behind")
			}
			if code, stdout, _ := c.main("", "session", "list"); code != 0 || strings.Contains(stdout, "rewind in progress") {
				t.Fatalf("after: %s", stdout)
			}
		})
	}
}
