package cli

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/checkpoint/checkpointtest"
	"github.com/tiny-agent/tiny-go/internal/providertest"
)

// TestTurnRewoundOnTheMacOSPath runs on Linux the checkpoints a Mac takes:
// no overlay (TINY_OVERLAY=off) and no inotify (TINY_INOTIFY=off, as
// watch.Start answers on macOS), so each checkpoint scans the tree. A turn
// that writes, makes a folder, edits and deletes, in a folder whose path
// has a space and non-ASCII letters, is rewound to the byte, and the run
// does not print the tracking fell-back line (the macOS line says it).
func TestTurnRewoundOnTheMacOSPath(t *testing.T) {
	turn := []string{
		"echo hi > a.txt && mkdir -p d/e && echo deep > d/e/f.txt",
		"sed -i s/one/ONE/ keep.txt && rm gone.txt && rmdir empty",
	}
	var replies []providertest.Reply
	for i, cmd := range turn {
		replies = append(replies, providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall(fmt.Sprintf("c%d", i+1), "bash", fmt.Sprintf("{\"command\":%q}", cmd))}})
	}
	srv := providertest.New(t, append(replies, providertest.Reply{Text: "done"})...)
	base := t.TempDir()
	dir, home := filepath.Join(base, "mon projet é"), filepath.Join(base, "home")
	for _, d := range []string{dir, home, filepath.Join(dir, "empty")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, content := range map[string]string{"keep.txt": "one\ntwo\n", "gone.txt": "bye\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	prog := programAs(t, "tiny-go")
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(prog, append([]string{"--cwd", dir}, args...)...)
		cmd.Env = []string{childEnv + "=1", "OTEL_SDK_DISABLED=true", "OPENROUTER_API_KEY=test-key", "TINY_ENDPOINT=" + srv.URL(),
			"HOME=" + home, "PATH=" + os.Getenv("PATH"), "TINY_OVERLAY=off", "TINY_INOTIFY=off"}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("tiny-go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	before := checkpointtest.Listing(t, dir)
	out := run("change the files")
	if strings.Contains(out, "fell back") {
		t.Fatalf("the fell-back line on the macOS path:\n%s", out)
	}
	after := checkpointtest.Listing(t, dir)
	if after["d/e/f.txt"] == "" || after["gone.txt"] != "" || after["keep.txt"] == before["keep.txt"] {
		t.Fatalf("the turn did not change the tree:\n%s\n%v", out, after)
	}
	sessions, _ := filepath.Glob(filepath.Join(dir, ".tiny-agent", "sessions", "*.jsonl"))
	if len(sessions) != 1 {
		t.Fatalf("%d sessions", len(sessions))
	}
	name := filepath.Base(sessions[0])
	id := strings.TrimSuffix(name[strings.IndexByte(name, '_')+1:], ".jsonl")
	rewindOut := run("session", "rewind", id, "--turn", "1", "--files-only")
	// Empty directories are the one thing the watcher path does not keep
	// (docs/checkpoints.md).
	delete(before, "empty")
	if d := listingDiff(checkpointtest.Listing(t, dir), before); d != "" {
		t.Fatalf("after the rewind:\n%s\nrewind said:\n%s", d, rewindOut)
	}
}
