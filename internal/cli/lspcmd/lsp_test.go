package lspcmd

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/tiny-agent/tiny-go/internal/cli/cmdutil"
)

// statusJSON runs `lsp status --json` in dir with the environment env.
func statusJSON(t *testing.T, dir string, env map[string]string) (servers []any, err error) {
	t.Helper()
	var out bytes.Buffer
	f := &cmdutil.Factory{Stdout: &out, Stderr: &out, Config: func(*cobra.Command) (cmdutil.Config, error) {
		return cmdutil.Config{Cwd: dir, Getenv: func(k string) string { return env[k] }}, nil
	}}
	cmd := NewCommand(f)
	cmd.SetArgs([]string{"status", "--json"})
	if err := cmd.Execute(); err != nil {
		return nil, err
	}
	var got struct {
		Servers []any `json:"servers"`
		Running []any `json:"running"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil || got.Running == nil {
		t.Fatalf("not the status object: %v\n%s", err, out.String())
	}
	return got.Servers, nil
}

// The status command reads its configuration from the Factory: the
// built-in servers are in effect, none with TINY_LSP=off, and a broken
// .lsp.json is one error that says how to get past it.
func TestStatusThroughTheFactory(t *testing.T) {
	dir := t.TempDir()
	if servers, err := statusJSON(t, dir, nil); err != nil || len(servers) == 0 {
		t.Fatalf("default: %v, %d servers", err, len(servers))
	}
	if servers, err := statusJSON(t, dir, map[string]string{"TINY_LSP": "off"}); err != nil || len(servers) != 0 {
		t.Fatalf("TINY_LSP=off: %v, %v", err, servers)
	}
	if err := os.WriteFile(filepath.Join(dir, ".lsp.json"), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := statusJSON(t, dir, nil); err == nil || !strings.Contains(err.Error(), "TINY_LSP=off") {
		t.Fatalf("broken .lsp.json: %v", err)
	}
}
