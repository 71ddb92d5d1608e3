package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/tiny-agent/tiny-go/internal/providertest"
)

// The Responses API's native calls run as tiny-go's own write, edit and
// bash (through the real binary): the files change, the session records
// named tools with JSON arguments, and the next request sends the native
// items back with their apply_patch_call_output and shell_call_output.
func TestResponsesNativeToolsRunAsTinyGoTools(t *testing.T) {
	items := []jsontext.Value{
		jsontext.Value(`{"id":"apc_1","type":"apply_patch_call","status":"completed","call_id":"call_P1","operation":{"type":"create_file","path":"new.txt","diff":"+created\n"}}`),
		jsontext.Value(`{"id":"apc_2","type":"apply_patch_call","status":"completed","call_id":"call_P2","operation":{"type":"update_file","path":"main.go","diff":"@@\n package main\n-var x = 1\n+var x = 2\n"}}`),
		jsontext.Value(`{"id":"apc_3","type":"apply_patch_call","status":"completed","call_id":"call_P3","operation":{"type":"delete_file","path":"old.txt"}}`),
		jsontext.Value(`{"id":"sh_1","type":"shell_call","status":"completed","call_id":"call_S1","action":{"commands":["cat new.txt","exit 3"],"timeout_ms":10000,"max_output_length":null}}`),
	}
	srv := providertest.New(t,
		providertest.Reply{Reasoning: "Plan the edit.", Signature: "gAAAAB-encrypted", Items: items},
		providertest.Reply{Text: "Done."},
		providertest.Reply{Text: "Again."},
	)
	dir := t.TempDir()
	for name, content := range map[string]string{"main.go": "package main\nvar x = 1\n", "old.txt": "bye\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c := &cliRun{t: t, dir: dir, env: map[string]string{"TINY_PROVIDER": "openai-responses", "OPENAI_API_KEY": "test-key",
		"TINY_MODEL": "gpt-5.1", "TINY_ENDPOINT": srv.URL(), "OTEL_SDK_DISABLED": "true"}}
	code, stdout, stderr := c.main("", "--approval", "auto", "change things")
	if code != 0 || stdout != "Done.\n" {
		t.Fatalf("exit %d stdout %q:\n%s", code, stdout, stderr)
	}
	for name, want := range map[string]string{"new.txt": "created\n", "main.go": "package main\nvar x = 2\n"} {
		if b, _ := os.ReadFile(filepath.Join(dir, name)); string(b) != want {
			t.Errorf("%s = %q", name, b)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "old.txt")); err == nil {
		t.Error("old.txt was not deleted")
	}
	// The session holds tiny-go's tools, as for any provider.
	var names []string
	for _, m := range c.state().Transcript {
		for _, tc := range m.ToolCalls {
			names = append(names, tc.Function.Name)
		}
	}
	if strings.Join(names, ",") != "write,edit,bash,bash" {
		t.Fatalf("recorded calls %v", names)
	}
	// The second request sends the items back and the results as the
	// output items of their types.
	var req struct {
		Input []jsontext.Value `json:"input"`
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || !strings.HasSuffix(reqs[1].Path, "/responses") {
		t.Fatalf("requests %d", len(reqs))
	}
	if err := json.Unmarshal(reqs[1].Body, &req); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, it := range req.Input {
		var head struct {
			Type   string `json:"type"`
			Status string `json:"status"`
		}
		_ = json.Unmarshal(it, &head)
		got = append(got, head.Type+":"+head.Status)
	}
	want := "message:,reasoning:,apply_patch_call:completed,apply_patch_call:completed,apply_patch_call:completed,shell_call:completed," +
		"apply_patch_call_output:completed,apply_patch_call_output:completed,apply_patch_call_output:completed,shell_call_output:"
	if strings.Join(got, ",") != want {
		t.Fatalf("input items:\n got %s\nwant %s", strings.Join(got, ","), want)
	}
	for i, it := range items {
		if string(req.Input[2+i]) != string(it) {
			t.Errorf("item %d not sent back byte for byte:\n%s", i, req.Input[2+i])
		}
	}
	if last := string(req.Input[len(req.Input)-1]); !strings.Contains(last, `"stdout":"created`) || !strings.Contains(last, `"exit_code":3`) {
		t.Errorf("shell output %s", last)
	}
	if !strings.Contains(string(req.Input[1]), `"encrypted_content":"gAAAAB-encrypted"`) {
		t.Errorf("reasoning item %s", req.Input[1])
	}

	// A new process that continues the session sends the same items back,
	// from beside the session file.
	if code, _, stderr := c.main("", "--approval", "auto", "--continue", "again"); code != 0 {
		t.Fatalf("continue: exit %d:\n%s", code, stderr)
	}
	var next struct {
		Input []jsontext.Value `json:"input"`
	}
	if err := json.Unmarshal(srv.Requests()[2].Body, &next); err != nil {
		t.Fatal(err)
	}
	for i := range req.Input {
		if string(next.Input[i]) != string(req.Input[i]) {
			t.Fatalf("after a restart, input[%d] differs:\n got %s\nwant %s", i, next.Input[i], req.Input[i])
		}
	}
}

// OPENAI_API_KEY goes only to OpenAI: another server that speaks the
// Responses API gets TINY_API_KEY (or nothing); OpenAI's endpoint without
// its key is one line that says what to set.
func TestResponsesKeysStayWithTheirHost(t *testing.T) {
	srv := providertest.New(t, providertest.Reply{Text: "one"}, providertest.Reply{Text: "two"})
	base := map[string]string{"TINY_PROVIDER": "openai-responses", "OPENAI_API_KEY": "sk-openai-SECRET-123456", "TINY_MODEL": "gpt-5.1",
		"TINY_ENDPOINT": srv.URL(), "OTEL_SDK_DISABLED": "true"}
	c := &cliRun{t: t, dir: t.TempDir(), env: base}
	if code, _, stderr := c.main("", "hi"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	c.env["TINY_API_KEY"] = "local-token-123456"
	if code, _, stderr := c.main("", "hi"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	reqs := srv.Requests()
	if got := reqs[0].Header.Get("Authorization"); got != "" {
		t.Fatalf("a local server got %q", got)
	}
	if got := reqs[1].Header.Get("Authorization"); got != "Bearer local-token-123456" {
		t.Fatalf("TINY_API_KEY not sent: %q", got)
	}
	c = &cliRun{t: t, dir: t.TempDir(), env: map[string]string{"TINY_PROVIDER": "openai-responses", "OTEL_SDK_DISABLED": "true"}}
	code, _, stderr := c.main("", "hi")
	if code == 0 || strings.Count(strings.TrimSpace(stderr), "\n") != 0 || !strings.Contains(stderr, "OPENAI_API_KEY is not set") {
		t.Fatalf("exit %d: %q", code, stderr)
	}
}
