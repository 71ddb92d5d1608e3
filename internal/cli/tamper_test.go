package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tiny-agent/tiny-go/internal/providertest"
)

// TestSessionFileChangedMidRun lets another process truncate, append to or
// replace (cp + mv) the session file while a bash call runs: the run stops
// with one line naming the file, exits non-zero, and writes nothing more.
func TestSessionFileChangedMidRun(t *testing.T) {
	if testing.Short() {
		t.Skip("short mode: starts tiny-go three times")
	}
	changes := map[string]struct {
		change func(t *testing.T, path string)
		reason string
	}{
		"truncated": {func(t *testing.T, path string) {
			if err := os.Truncate(path, 100); err != nil {
				t.Fatal(err)
			}
		}, "was truncated to 100 bytes"},
		"appended to": {func(t *testing.T, path string) {
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteString("{}\n")
			f.Close()
		}, "was appended to"},
		"replaced (cp + mv)": {func(t *testing.T, path string) {
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path+".new", b, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(path+".new", path); err != nil {
				t.Fatal(err)
			}
		}, "was replaced by another file"},
		"rewritten in place (same length)": {func(t *testing.T, path string) {
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			forged := bytes.Replace(b, []byte(`"content":"work"`), []byte(`"content":"pwnd"`), 1)
			if bytes.Equal(forged, b) {
				t.Fatal("nothing to forge")
			}
			f, err := os.OpenFile(path, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteAt(forged, 0)
			f.Close()
		}, "was rewritten in place: line 2 is not what tiny-go committed"},
	}
	for name, c := range changes {
		t.Run(name, func(t *testing.T) {
			// The markers lie outside the working directory: over its
			// overlay the command's writes there reach the tree only when it
			// ends, and a name created after it looked may stay unseen.
			marks := t.TempDir()
			srv := providertest.New(t,
				providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c1", "bash", mustJSON(t, map[string]string{"command": "touch '" + marks + "/ready'; while [ ! -e '" + marks + "/go' ]; do sleep 0.02; done; echo done"}))}},
				providertest.Reply{Text: "never asked for"},
			)
			cl := newCLI(t, srv)
			cmd := cl.command(srv.URL(), "--cwd", cl.dir, "work")
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(15 * time.Second)
			for {
				if _, err := os.Stat(filepath.Join(marks, "ready")); err == nil {
					break
				}
				if time.Now().After(deadline) {
					cmd.Process.Kill()
					t.Fatalf("bash never started: %s", stderr.String())
				}
				time.Sleep(10 * time.Millisecond)
			}
			files := cl.sessions()
			if len(files) != 1 {
				t.Fatalf("%d session files", len(files))
			}
			path := files[0]
			c.change(t, path)
			changed, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(marks, "go"), nil, 0o600); err != nil {
				t.Fatal(err)
			}
			err = cmd.Wait()
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() == 0 {
				t.Fatalf("exit: %v, want non-zero\n%s", err, stderr.String())
			}
			var errLines []string
			for _, l := range strings.Split(stderr.String(), "\n") {
				if strings.Contains(l, path) && !strings.HasPrefix(l, "session path:") {
					errLines = append(errLines, l)
				}
			}
			if len(errLines) != 1 || !strings.Contains(errLines[0], "session file "+path+" "+c.reason) || !strings.Contains(errLines[0], "stopping without writing more") {
				t.Fatalf("stderr lines naming the file: %q\nstderr:\n%s", errLines, stderr.String())
			}
			if after, _ := os.ReadFile(path); !bytes.Equal(after, changed) {
				t.Fatalf("the session file changed after the other program's change:\n%s", after[len(changed):])
			}
			if len(srv.Requests()) != 1 {
				t.Fatalf("%d model requests, want 1: the run went on", len(srv.Requests()))
			}
			if stdout.Len() != 0 {
				t.Fatalf("stdout: %q", stdout.String())
			}
		})
	}
}

// TestContinueNamesACorruptNewestSession: --continue neither skips a
// corrupt newest session silently nor touches it; it says which one and
// what to do.
func TestContinueNamesACorruptNewestSession(t *testing.T) {
	srv := providertest.New(t, providertest.Reply{Text: "first answer"})
	cl := newCLI(t, srv)
	if code, _, stderr := cl.main("", "first"); code != 0 {
		t.Fatalf("first run: %d %s", code, stderr)
	}
	good := cl.sessions()[0]
	// A newer session whose second line is not a fact.
	header, _, _ := strings.Cut(string(mustRead(t, good)), "\n")
	id := "01a23c00-0000-7000-8000-000000000001"
	header = strings.Replace(header, strings.TrimSuffix(filepath.Base(good)[len("2026-12-03T13-02-42-158Z_"):], ".jsonl"), id, 1)
	bad := filepath.Join(filepath.Dir(good), "2999-01-01T00-00-00-000Z_"+id+".jsonl")
	content := header + "\n{\"not\":\"a fact\"}\n"
	if err := os.WriteFile(bad, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := cl.main("", "--continue", "second")
	if code == 0 {
		t.Fatal("--continue went on past a corrupt newest session")
	}
	for _, want := range []string{"--continue: the newest session " + id, bad, "is corrupt (", "tiny-go session verify " + id, "--session <id>"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if string(mustRead(t, bad)) != content {
		t.Fatal("the corrupt session was modified")
	}
	if len(srv.Requests()) != 1 {
		t.Fatal("a model request was made")
	}
}
