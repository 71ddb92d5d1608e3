package headless_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/providertest"
)

// These tests run the real tiny-go binary under the official Claude Agent
// SDK for Python (claude-agent-sdk, tag v0.2.143 of
// anthropics/claude-agent-sdk-python), through testdata/client.py. The
// SDK and its dependencies (anyio >= 4, mcp, httpx, ...) are on no
// registry this project reaches, so they run only where TINY_PY_SDK is a
// PYTHONPATH under which `import claude_agent_sdk` works (docs/headless.md).

// pyClient runs testdata/client.py SCENARIO with tiny-go in dir and
// returns what the SDK program saw.
func pyClient(t *testing.T, srv *providertest.Server, dir, scenario string, extra ...string) map[string]any {
	t.Helper()
	path := os.Getenv("TINY_PY_SDK")
	if path == "" {
		t.Skip("TINY_PY_SDK is not set: the Python Agent SDK is not installable here (docs/headless.md)")
	}
	python := os.Getenv("TINY_PY_SDK_PYTHON")
	if python == "" {
		python = "python3"
	}
	env := append(append(env(srv.URL()), "MARKS="+marksOf(t, dir)), extra...)
	env = append(env, "HL_AGENT="+selfLink(t), "HL_CWD="+dir, "PYTHONPATH="+path, "CLAUDE_AGENT_SDK_SKIP_VERSION_CHECK=1")
	testdata, _ := filepath.Abs("testdata")
	cmd := exec.Command(python, filepath.Join(testdata, "client.py"), scenario)
	cmd.Dir, cmd.Env = testdata, env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("client: %v\nstderr:\n%s", err, stderr.String())
	}
	var seen map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &seen); err != nil {
		t.Fatalf("client output %q: %v\nstderr:\n%s", stdout.String(), err, stderr.String())
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("client saw: %s\nstderr:\n%s", stdout.String(), stderr.String())
		}
	})
	return seen
}

// pyMessages are the messages of a class (ResultMessage, AssistantMessage,
// ...), in order.
func pyMessages(seen map[string]any, class string) []map[string]any {
	var out []map[string]any
	for _, m := range seen["messages"].([]any) {
		if mm := m.(map[string]any); mm["_class"] == class {
			out = append(out, mm)
		}
	}
	return out
}

// 100 query("hello") in a row, each a new tiny-go whose stdin the SDK
// closes right after the prompt: every one answers.
func TestPySDKHelloAlwaysAnswers(t *testing.T) {
	const n = 100
	dir := t.TempDir()
	var replies []providertest.Reply
	for range n {
		replies = append(replies, providertest.Reply{Text: "hello back", ChunkSize: 3})
	}
	srv := providertest.New(t, replies...)
	seen := pyClient(t, srv, dir, "hello", "HL_COUNT=100")
	if thrown, _ := seen["thrown"].(string); thrown != "" {
		t.Fatalf("the SDK raised %s", thrown)
	}
	results := pyMessages(seen, "ResultMessage")
	ok := 0
	for _, r := range results {
		if r["subtype"] == "success" && r["result"] == "hello back" {
			ok++
		}
	}
	if ok != n {
		t.Fatalf("%d of %d runs answered (%d results)", ok, n, len(results))
	}
}
