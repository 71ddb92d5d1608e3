package acp_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/providertest"
)

// Claude Code hooks run in an editor's session too: a PreToolUse hook
// denies the write before the editor is asked (so only the command's
// permission is requested), its reason reaches the model, and the
// command's PostToolUse hook gets Claude Code's input.
func TestSDKClientHooks(t *testing.T) {
	srv := providertest.New(t,
		providertest.Reply{Text: "Making notes.", ToolCalls: []providertest.ToolCall{
			{ID: "c1", Name: "bash", Arguments: `{"command":"touch one.txt"}`},
			{ID: "c2", Name: "write", Arguments: `{"path":"notes.txt","content":"hello\n"}`},
		}},
		providertest.Reply{Text: "Done."},
	)
	dir := t.TempDir()
	write := func(name, content string, mode os.FileMode) {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
	write(".claude/settings.json", `{"hooks":{
"PreToolUse":[{"matcher":"Write","hooks":[{"type":"command","command":"echo '{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"deny\",\"permissionDecisionReason\":\"notes live in the wiki\"}}'"}]}],
"PostToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"cat > \"$CLAUDE_PROJECT_DIR/post.json\""}]}]}}`, 0o644)
	seen := sdkClient(t, srv, dir, "permission", "HOME="+t.TempDir(), "TINY_NOTIFY=off")

	perms := seen["permissions"].([]any)
	if len(perms) != 1 || perms[0].(map[string]any)["toolCall"].(map[string]any)["toolCallId"] != "c1" {
		t.Fatalf("permission requests: %v", perms)
	}
	if toolStatus(seen, "c1") != "completed" || toolStatus(seen, "c2") != "failed" {
		t.Fatalf("statuses: c1 %s, c2 %s", toolStatus(seen, "c1"), toolStatus(seen, "c2"))
	}
	if _, err := os.Stat(filepath.Join(dir, "notes.txt")); err == nil {
		t.Fatal("the denied write ran")
	}
	reqs := srv.Requests()
	var told string
	for _, m := range reqs[len(reqs)-1].Chat.Messages {
		if m.Role == "tool" && m.ToolCallID == "c2" && m.Content != nil {
			told = *m.Content
		}
	}
	if !strings.Contains(told, "notes live in the wiki") {
		t.Fatalf("the model was told %q", told)
	}
	post, err := os.ReadFile(filepath.Join(dir, "post.json"))
	if err != nil || !strings.Contains(string(post), `"tool_name":"Bash"`) || !strings.Contains(string(post), `"command":"touch one.txt"`) {
		t.Fatalf("PostToolUse input %s (%v)", post, err)
	}
}
