package acp_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/approval"
	"github.com/tiny-agent/tiny-go/internal/providertest"
)

// TestSDKClientEveryMode: an editor is offered the modes of --approval
// (issue 47: it saw only ask, auto and plan) and each works: in edits an
// edit inside the directory runs without a question; in review a command
// runs against a private view and its changes land only when accepted.
func TestSDKClientEveryMode(t *testing.T) {
	srv := providertest.New(t,
		providertest.Reply{ToolCalls: []providertest.ToolCall{{ID: "w1", Name: "write", Arguments: `{"path":"edited.txt","content":"by edits\n"}`}}},
		providertest.Reply{Text: "Written."},
		providertest.Reply{ToolCalls: []providertest.ToolCall{{ID: "b1", Name: "bash", Arguments: `{"command":"echo kept > kept.txt"}`}}},
		providertest.Reply{ToolCalls: []providertest.ToolCall{{ID: "b2", Name: "bash", Arguments: `{"command":"echo dropped > dropped.txt"}`}}},
		providertest.Reply{Text: "Ran them."},
	)
	dir := t.TempDir()
	seen := sdkClient(t, srv, dir, "modes")

	var ids []string
	for _, m := range seen["modes"].(map[string]any)["availableModes"].([]any) {
		mode := m.(map[string]any)
		ids = append(ids, mode["id"].(string))
		if mode["name"] == "" || mode["description"] == "" {
			t.Errorf("mode %v has no name or description", mode)
		}
	}
	if !slices.Equal(ids, approval.ModeNames()) {
		t.Fatalf("the editor is offered %v, want %v", ids, approval.ModeNames())
	}
	if n := seen["editsPermissions"].(float64); n != 0 {
		t.Fatalf("edits mode asked %v times about a write inside the directory", n)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "edited.txt")); err != nil || string(b) != "by edits\n" {
		t.Fatalf("edited.txt: %q %v", b, err)
	}
	perms := seen["permissions"].([]any)
	if len(perms) != 2 {
		t.Fatalf("%d review questions, want 2: %v", len(perms), perms)
	}
	for i, want := range []string{"b1", "b2"} {
		tc := perms[i].(map[string]any)["toolCall"].(map[string]any)
		if tc["toolCallId"] != want || !strings.Contains(dump(tc), "Apply what this command changed") {
			t.Fatalf("review question %d: %v", i, tc)
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, "kept.txt")); err != nil || string(b) != "kept\n" {
		t.Fatalf("the accepted command's change: %q %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "dropped.txt")); !os.IsNotExist(err) {
		t.Fatalf("the rejected command's change landed: %v", err)
	}
}
