package evalcmd

import (
	"bytes"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/cli/cmdutil"
)

// run runs `tiny-go eval ARGS` on a Factory of buffers.
func run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	f := &cmdutil.Factory{Stdout: &out, Stderr: &out, Getenv: func(string) string { return "" }}
	cmd := NewCommand(f)
	cmd.SetArgs(args)
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	err := cmd.Execute()
	return out.String(), err
}

// Mistakes in how eval is invoked are usage errors (exit status 2) that
// name the flag or the file, before anything runs.
func TestEvalUsageErrors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "none")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "needs at least one task folder"},
		{[]string{missing, "--repeat", "0"}, "--repeat and --parallel must be at least 1"},
		{[]string{missing, "--timeout", "0s"}, "--timeout and --test-timeout must be positive"},
		{[]string{"compare", "a.json"}, "needs two result files"},
		{[]string{"compare", missing + "-a.json", missing + "-b.json"}, missing},
	} {
		_, err := run(t, tc.args...)
		var ue cmdutil.UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("eval %q: %v; want a usage error with %q", tc.args, err, tc.want)
		}
	}
}
