package testenv

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// NodeClient runs testdata/client.mjs SCENARIO, a client program built on
// an npm SDK we did not write (testdata/node_modules/<pkg>, installed by
// `npm ci --prefix <testdata> <npmFlags>`), with env, and returns the JSON
// object it prints of what it saw. A client that reports an error fails
// the test; on any failure the client's output is logged.
func NodeClient(t *testing.T, pkg, npmFlags, scenario string, env []string) map[string]any {
	t.Helper()
	testdata, _ := filepath.Abs("testdata")
	install := "npm ci --prefix " + testdata + npmFlags
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed; run .ci/run's installs, or install node and: " + install)
	}
	if _, err := os.Stat(filepath.Join(testdata, "node_modules", pkg, "package.json")); err != nil {
		t.Skip(pkg + " is not installed; run: " + install)
	}
	cmd := exec.Command(node, filepath.Join(testdata, "client.mjs"), scenario)
	cmd.Dir = testdata
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("client: %v\nstderr:\n%s", err, stderr.String())
	}
	var seen map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &seen); err != nil {
		t.Fatalf("client output %q: %v\nstderr:\n%s", stdout.String(), err, stderr.String())
	}
	if seen["error"] != nil {
		t.Fatalf("client failed: %v\nagent stderr:\n%v\nclient stderr:\n%s", seen["error"], seen["stderr"], stderr.String())
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("client saw: %s\nstderr:\n%s", stdout.String(), stderr.String())
		}
	})
	return seen
}
