package mcpcmd

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/tiny-agent/tiny-go/internal/cli/cmdutil"
	"github.com/tiny-agent/tiny-go/internal/config"
	"github.com/tiny-agent/tiny-go/internal/testenv"
)

// project is a project directory and the environment the commands see.
type project struct {
	t   *testing.T
	dir string
	env map[string]string
}

func newProject(t *testing.T) *project {
	return &project{t: t, dir: testenv.WorkDir(t), env: map[string]string{}}
}

func (p *project) getenv(k string) string { return p.env[k] }

func (p *project) write(name, data string) {
	p.t.Helper()
	path := filepath.Join(p.dir, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		p.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		p.t.Fatal(err)
	}
}

// mcp runs `tiny-go mcp args...` in the project through the Factory, and
// returns the exit code tiny-go would end with and what it printed.
func (p *project) mcp(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	f := &cmdutil.Factory{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: p.getenv,
		Config: func(*cobra.Command) (cmdutil.Config, error) {
			s, err := config.Load(config.Options{WorkDir: p.dir, Getenv: p.getenv})
			if err != nil {
				return cmdutil.Config{}, err
			}
			return cmdutil.Config{Cwd: p.dir, Getenv: s.Getenv(p.getenv), Settings: s}, nil
		}}
	cmd := NewCommand(f)
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&errb)
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	return exitCode(cmd.Execute(), &errb), out.String(), errb.String()
}

// exitCode is the code tiny-go's root ends with for err, after the one
// line it prints.
func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return cmdutil.ExitOK
	}
	var ee cmdutil.ExitError
	if errors.As(err, &ee) {
		return ee.Code
	}
	fmt.Fprintf(stderr, "%s: %v\n", cmdutil.ProgramName, err)
	if errors.As(err, new(cmdutil.UsageError)) {
		return cmdutil.ExitUsage
	}
	return cmdutil.ExitFailed
}

// The local scope wins over the project's .mcp.json for the same name.
func TestScopesPrecedence(t *testing.T) {
	p := newProject(t)
	p.write(".mcp.json", `{"mcpServers":{"x":{"command":"project-server-xyz"}}}`)
	if code, _, stderr := p.mcp("add", "x", "--", "local-server-xyz", "--flag"); code != 0 {
		t.Fatalf("add: %d %s", code, stderr)
	}
	_, stdout, _ := p.mcp("list")
	if !strings.Contains(stdout, "local-server-xyz --flag") || strings.Contains(stdout, "project-server-xyz") || !strings.Contains(stdout, "local: ") {
		t.Errorf("list: %q", stdout)
	}
	if code, _, stderr := p.mcp("remove", "x"); code != 2 || !strings.Contains(stderr, "several scopes (local, project)") {
		t.Errorf("remove without scope: %d %q", code, stderr)
	}
	if code, _, _ := p.mcp("remove", "--scope", "local", "x"); code != 0 {
		t.Error("remove --scope local failed")
	}
	if _, stdout, _ := p.mcp("list"); !strings.Contains(stdout, "project-server-xyz") {
		t.Errorf("after remove: %q", stdout)
	}
}
