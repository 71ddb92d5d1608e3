package sessioncmd

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tiny-agent/tiny-go/internal/cli/cmdutil"
	"github.com/tiny-agent/tiny-go/internal/session/sessiontest"
)

// factory is a Factory on buffers, working in dir.
func factory(dir string) (*cmdutil.Factory, *bytes.Buffer, *bytes.Buffer) {
	var out, errOut bytes.Buffer
	return &cmdutil.Factory{
		Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut,
		Getenv:  func(string) string { return "" },
		WorkDir: func() (string, error) { return dir, nil },
		Cwd:     func() string { return dir },
		Now:     time.Now,
	}, &out, &errOut
}

// The state command runs on what the Factory hands it: a session file
// prints {"ok":true,...} on its Stdout; a line cut into it is a corrupt
// session, exit status 1 (cmdutil.ExitError).
func TestStateThroughTheFactory(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	data := sessiontest.Generate(sessiontest.Options{Facts: 40, Seed: 1})
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	f, out, _ := factory(dir)
	cmd := NewStateCommand(f)
	cmd.SetArgs([]string{path})
	if err := cmd.Execute(); err != nil || !strings.HasPrefix(out.String(), `{"ok":true`) {
		t.Fatalf("state: %v, %.80s", err, out.String())
	}

	lines := bytes.SplitAfter(data, []byte("\n"))
	bad := bytes.Join(append(lines[:2:2], []byte("{\"not\":\"a fact\"}\n")), nil)
	if err := os.WriteFile(path, bad, 0o600); err != nil {
		t.Fatal(err)
	}
	f, out, _ = factory(dir)
	cmd = NewStateCommand(f)
	cmd.SetArgs([]string{path})
	var ee cmdutil.ExitError
	if err := cmd.Execute(); !errors.As(err, &ee) || ee.Code != cmdutil.ExitFailed || !strings.HasPrefix(out.String(), `{"ok":false`) {
		t.Fatalf("corrupt state: %v, %.80s", err, out.String())
	}
}

// An id of no session of the working directory is a usage error that
// says how to list them.
func TestOpenNamesNoSession(t *testing.T) {
	f, _, _ := factory(t.TempDir())
	_, err := Open(f, "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b")
	var ue cmdutil.UsageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "tiny-go session list") {
		t.Fatalf("err = %v", err)
	}
}

// Ids are cut to abbrevLen characters unless a neighbour shares more, and
// never at a hyphen.
func TestAbbreviateIDs(t *testing.T) {
	ids := []string{
		"0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b",
		"0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5c",
		"0190a1b3-0000-7000-8000-000000000000",
		"12345678-0000-7000-8000-000000000000",
	}
	got := AbbreviateIDs(ids)
	if got[ids[3]] != "12345678" {
		t.Errorf("lone id: %q", got[ids[3]])
	}
	if got[ids[2]] != "0190a1b3" {
		t.Errorf("neighbour differs at 8: %q", got[ids[2]])
	}
	// ids 0 and 1 share 35 characters: past maxAbbrevLen they are whole.
	if got[ids[0]] != ids[0] || got[ids[1]] != ids[1] {
		t.Errorf("same-millisecond ids: %q %q", got[ids[0]], got[ids[1]])
	}
	for _, v := range got {
		if strings.HasSuffix(v, "-") {
			t.Errorf("%q ends at a hyphen", v)
		}
	}
}
