package fleet

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/eval"
)

// A failed test.sh after an agent that exited with an error says both:
// the agent's last line is most often why nothing was done (a retried
// task's session refused by tiny-go read "test.sh exited 2" alone).
func TestJudgeNamesTheAgentsFailure(t *testing.T) {
	task := t.TempDir()
	if err := os.Mkdir(filepath.Join(task, "fixture"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{"prompt.txt": "do it\n", "test.sh": "exit 2\n"} {
		if err := os.WriteFile(filepath.Join(task, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	root := t.TempDir()
	repo := filepath.Join(root, "repo")
	if err := os.Mkdir(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	a := &Activities{Env: os.Environ()}
	run := agentRun{exit: 1, stderr: "tiny-go: session s.jsonl is corrupt: UNSEALED at line 1\n"}
	res, err := a.judge(context.Background(), Task{Name: "t"}, Result{}, run, &eval.Task{Name: "t", Dir: task}, root, repo)
	if err != nil {
		t.Fatal(err)
	}
	want := "test.sh exited 2 (the agent exited 1: tiny-go: session s.jsonl is corrupt: UNSEALED at line 1)"
	if res.Status != eval.StatusFail || res.Reason != want {
		t.Errorf("judge: %s %q, want %q", res.Status, res.Reason, want)
	}
	run.exit = 0
	if res, _ = a.judge(context.Background(), Task{Name: "t"}, Result{}, run, &eval.Task{Name: "t", Dir: task}, root, repo); res.Reason != "test.sh exited 2" {
		t.Errorf("judge after a clean exit: %q", res.Reason)
	}
}
