package cli

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tiny-agent/tiny-go/internal/providertest"
	"github.com/tiny-agent/tiny-go/internal/session"
)

// The native calls of the Responses API are as durable as any other: killed
// with SIGKILL before and after every commit of a run that creates a file
// with apply_patch and appends to a marker with shell, a fresh process
// resumes it; the marker is appended once, and the request after the
// calls sends the native items back byte for byte with their outputs.
func TestResponsesNativeCallsSurviveSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real processes")
	}
	patch := `{"id":"apc_1","type":"apply_patch_call","status":"completed","call_id":"call_P1","operation":{"type":"create_file","path":"new.txt","diff":"+created\n"}}`
	shell := `{"id":"sh_1","type":"shell_call","status":"completed","call_id":"call_S1","action":{"commands":["echo once >> marker"],"timeout_ms":10000,"max_output_length":null}}`
	var mu sync.Mutex
	var final []byte // the body of the request after the calls
	srv := providertest.New(t)
	srv.Respond(func(r providertest.Request) providertest.Reply {
		if bytes.Count(r.Body, []byte(`_call_output"`)) < 2 {
			return providertest.Reply{Reasoning: "plan", Signature: "enc-1", Items: []jsontext.Value{jsontext.Value(patch), jsontext.Value(shell)}}
		}
		mu.Lock()
		final = r.Body
		mu.Unlock()
		return providertest.Reply{Text: "Done."}
	})
	run := func(dir, crashAt string, args ...string) (killed bool, err error) {
		cmd := exec.Command(programAs(t, "tiny-go-crash"), args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), childEnv+"=1", "TINY_PROVIDER=openai-responses", "OPENAI_API_KEY=test-key",
			"TINY_MODEL=gpt-5.1", "TINY_ENDPOINT="+srv.URL(), "OTEL_SDK_DISABLED=true", "XDG_CONFIG_HOME="+dir+"/.config",
			crashEnv+"="+crashAt, "TINY_CRASH_COUNT_FILE="+filepath.Join(dir, "commits"))
		var errb bytes.Buffer
		cmd.Stderr = &errb
		err = cmd.Run()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
				return true, nil
			}
		}
		if err != nil {
			err = fmt.Errorf("%v: %s", err, errb.String())
		}
		return false, err
	}
	// check: nothing ran twice, and the request after the calls sent both
	// native items back byte for byte, each with its output (completed, or
	// failed when the crash left the call interrupted: never replayed).
	check := func(t *testing.T, dir string, clean bool) {
		marker, _ := os.ReadFile(filepath.Join(dir, "marker"))
		created, _ := os.ReadFile(filepath.Join(dir, "new.txt"))
		if string(marker) != "once\n" && (clean || len(marker) > 0) {
			t.Fatalf("marker = %q", marker)
		}
		if string(created) != "created\n" && (clean || len(created) > 0) {
			t.Fatalf("new.txt = %q", created)
		}
		mu.Lock()
		body := string(final)
		mu.Unlock()
		wants := []string{patch, shell, `"encrypted_content":"enc-1"`, `{"type":"apply_patch_call_output","call_id":"call_P1","status":"`, `{"type":"shell_call_output","call_id":"call_S1"`}
		if clean {
			wants = append(wants, `{"type":"apply_patch_call_output","call_id":"call_P1","status":"completed"`)
		}
		for _, want := range wants {
			if !strings.Contains(body, want) {
				t.Fatalf("the request after the calls lacks %s:\n%s", want, body)
			}
		}
		if strings.Contains(body, `"max_output_tokens"`) {
			t.Fatal("an unset max_output_tokens was sent")
		}
	}

	dry := t.TempDir()
	if killed, err := run(dry, "", "--approval", "auto", "make it"); err != nil || killed {
		t.Fatalf("dry run: %v", err)
	}
	check(t, dry, true)
	n, err := strconv.Atoi(readFile(t, filepath.Join(dry, "commits")))
	if err != nil || n < 5 {
		t.Fatalf("dry run made %d commits (%v)", n, err)
	}
	for k := 1; k <= n; k++ {
		for _, mode := range []string{"before", "after"} {
			point := fmt.Sprintf("%s:%d", mode, k)
			t.Run(point, func(t *testing.T) {
				dir := t.TempDir()
				mu.Lock()
				final = nil
				mu.Unlock()
				if killed, err := run(dir, point, "--approval", "auto", "make it"); err != nil || !killed {
					t.Fatalf("not killed at %s: %v", point, err)
				}
				files, _ := filepath.Glob(filepath.Join(dir, ".tiny-agent", "sessions", "*.jsonl"))
				if len(files) != 1 {
					t.Skipf("no session yet at %s", point) // killed before the session began
				}
				b, _ := os.ReadFile(files[0])
				st, corrupt := session.Reduce(b)
				if corrupt != nil {
					t.Fatalf("crashed session: %v", corrupt)
				}
				if st.Operation == nil {
					return // the prompt never committed: nothing to resume
				}
				if killed, err := run(dir, "", "--approval", "auto", "--session", st.Header.ID, "--json"); err != nil || killed {
					t.Fatalf("resume: %v", err)
				}
				if st := sessionState(t, dir); st.Operation != nil {
					t.Fatal("the run is still open after resume")
				}
				check(t, dir, false)
			})
		}
	}
}
