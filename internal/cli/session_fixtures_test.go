package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/tiny-agent/tiny-go/internal/conformance"
	"github.com/tiny-agent/tiny-go/internal/session"
	"github.com/tiny-agent/tiny-go/internal/session/sessiontest"
)

// run calls Main in-process and returns the exit code and outputs.
func run(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = Main(args, bytes.NewReader(nil), &out, &errOut, func(string) string { return "" })
	return code, out.String(), errOut.String()
}

func jsonEqual(t *testing.T, got, want []byte) bool {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, got)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatal(err)
	}
	return reflect.DeepEqual(g, w)
}

// TestSessionStateFixtures runs `session state` on every golden fixture:
// the output is the expected state, the exit code follows ok, and the file
// is not modified.
func TestSessionStateFixtures(t *testing.T) {
	dir := filepath.Join(conformance.Dir(t), "session", "fixtures")
	var manifest struct {
		Fixtures []struct {
			Name     string `json:"name"`
			File     string `json:"file"`
			Expected string `json:"expected"`
		} `json:"fixtures"`
	}
	if err := json.Unmarshal(readBytes(t, filepath.Join(dir, "manifest.json")), &manifest, json.RejectUnknownMembers(false)); err != nil {
		t.Fatal(err)
	}
	if len(manifest.Fixtures) == 0 {
		t.Fatal("no fixtures")
	}
	for _, fx := range manifest.Fixtures {
		t.Run(fx.Name, func(t *testing.T) {
			path := filepath.Join(dir, fx.File)
			before := readBytes(t, path)
			want := readBytes(t, filepath.Join(dir, fx.Expected))
			var expect struct {
				OK bool `json:"ok"`
			}
			if err := json.Unmarshal(want, &expect, json.RejectUnknownMembers(false)); err != nil {
				t.Fatal(err)
			}
			code, stdout, stderr := run(t, "session", "state", path)
			if wantCode := map[bool]int{true: 0, false: 1}[expect.OK]; code != wantCode {
				t.Errorf("exit code %d, want %d (stderr %q)", code, wantCode, stderr)
			}
			if !jsonEqual(t, []byte(stdout), want) {
				t.Errorf("state\n got %s\nwant %s", stdout, want)
			}
			if !bytes.Equal(readBytes(t, path), before) {
				t.Error("session state modified the file")
			}
		})
	}
}

// TestSessionPlanFixtures runs `session plan` on every planner fixture.
func TestSessionPlanFixtures(t *testing.T) {
	dir := filepath.Join(conformance.Dir(t), "session")
	var manifest struct {
		Fixtures []struct {
			Name     string `json:"name"`
			Input    string `json:"input"`
			Expected string `json:"expected"`
		} `json:"fixtures"`
	}
	if err := json.Unmarshal(readBytes(t, filepath.Join(dir, "planner-fixtures", "manifest.json")), &manifest, json.RejectUnknownMembers(false)); err != nil {
		t.Fatal(err)
	}
	for _, fx := range manifest.Fixtures {
		t.Run(fx.Name, func(t *testing.T) {
			var input struct {
				SessionFile string         `json:"sessionFile"`
				Current     jsontext.Value `json:"current"`
			}
			if err := json.Unmarshal(readBytes(t, filepath.Join(dir, "planner-fixtures", fx.Input)), &input); err != nil {
				t.Fatal(err)
			}
			current := filepath.Join(t.TempDir(), "current.json")
			if err := os.WriteFile(current, input.Current, 0o600); err != nil {
				t.Fatal(err)
			}
			code, stdout, stderr := run(t, "session", "plan", filepath.Join(dir, "fixtures", input.SessionFile), "--current", current)
			if code != 0 {
				t.Fatalf("exit code %d: %s", code, stderr)
			}
			if want := readBytes(t, filepath.Join(dir, "planner-fixtures", fx.Expected)); !jsonEqual(t, []byte(stdout), want) {
				t.Errorf("plan\n got %s\nwant %s", stdout, want)
			}
		})
	}
}

// TestSessionStateLarge checks that `tiny-go session state` on a
// 50,000-fact session completes in less than a second, measured on a real
// process (the test binary installed as tiny-go by TestMain) so that the
// test's own heap does not count.
func TestSessionStateLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("large session")
	}
	bin, err := exec.LookPath("tiny-go")
	if err != nil {
		t.Fatalf("tiny-go is not installed by TestMain: %v", err)
	}
	data := sessiontest.Generate(sessiontest.Options{Facts: 50_000, Seed: 1, CompactEvery: 50})
	st, c := session.Reduce(data)
	if c != nil {
		t.Fatal(c)
	}
	path := filepath.Join(t.TempDir(), "large.jsonl")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	limit := time.Second
	if raceEnabled {
		limit *= 10 // the race detector slows everything down
	}
	// The machine running the tests is shared: wall time measures the
	// neighbours as much as tiny-go. The bound is on the process's CPU
	// time (user + system), the best of three runs; wall time is logged.
	var stdout, stderr bytes.Buffer
	cpu, wall := time.Duration(1<<62), time.Duration(1<<62)
	for range 3 {
		stdout.Reset()
		stderr.Reset()
		cmd := exec.Command(bin, "session", "state", path)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		start := time.Now()
		if err := cmd.Run(); err != nil {
			t.Fatalf("tiny-go session state: %v: %s", err, stderr.Bytes())
		}
		wall = min(wall, time.Since(start))
		cpu = min(cpu, cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime())
	}
	t.Logf("%d facts, %d bytes: session state printed %d bytes; best of 3: %v CPU, %v wall",
		st.Facts, len(data), stdout.Len(), cpu, wall)
	if st.Facts < 50_000 {
		t.Errorf("generated only %d facts", st.Facts)
	}
	if cpu >= limit {
		t.Errorf("session state took %v of CPU time, want < %v", cpu, limit)
	}
	want, err := session.MarshalResult(st, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(bytes.TrimSuffix(stdout.Bytes(), []byte("\n")), want) {
		t.Error("printed state differs from the reduced state")
	}
}

func readBytes(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
