package eval_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/eval"
	"github.com/tiny-agent/tiny-go/internal/providertest"
)

// BenchmarkReplayTask is one task under replay, end to end: fixture copy
// and git commit, the tiny-go process answering two recorded requests,
// test.sh, and reducing the session. harness-ms is everything but the
// tiny-go process and test.sh: what the eval itself costs per task.
func BenchmarkReplayTask(b *testing.B) {
	suite := b.TempDir()
	tk := writeTaskB(b, suite)
	recorded := b.TempDir()
	srv, err := providertest.Start("127.0.0.1:0", helloReplies...)
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	rep, err := eval.Run(context.Background(), eval.Config{Tasks: []eval.Task{tk}, Command: self(b), Record: recorded,
		Env: childEnviron("TINY_ENDPOINT=" + srv.URL())})
	if err != nil || !rep.AllPassed() {
		b.Fatalf("recording failed: %v %+v", err, rep)
	}
	var setup, agent, test, harness float64
	b.ResetTimer()
	for range b.N {
		rep, err := eval.Run(context.Background(), eval.Config{Tasks: []eval.Task{tk}, Command: self(b), Env: childEnviron(), Replay: recorded})
		if err != nil || !rep.AllPassed() {
			b.Fatalf("replay failed: %v", err)
		}
		r := rep.Tasks[0].Runs[0]
		setup += float64(r.SetupMs)
		agent += float64(r.AgentMs)
		test += float64(r.TestMs)
		harness += float64(r.WallMs - r.AgentMs - r.TestMs)
	}
	n := float64(b.N)
	b.ReportMetric(setup/n, "setup-ms/op")
	b.ReportMetric(agent/n, "agent-ms/op")
	b.ReportMetric(test/n, "test-ms/op")
	b.ReportMetric(harness/n, "harness-ms/op")
}

func writeTaskB(b *testing.B, suite string) eval.Task {
	dir := filepath.Join(suite, "hello")
	for name, content := range map[string]string{
		"prompt.txt":        "Create hello.txt containing the line: hello, eval\n",
		"test.sh":           "grep -qx 'hello, eval' hello.txt\n",
		"fixture/README.md": "A scratch repository.\n",
	} {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return eval.Task{Name: "hello", Dir: dir}
}
