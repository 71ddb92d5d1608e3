package headless_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/providertest"
)

// Permission modes mean what they mean in Claude Code, under both SDKs.
// client runs the "mode" scenario with extra environment.
type modeClient func(srv *providertest.Server, dir string, extra ...string) map[string]any

func pyModeClient(t *testing.T) modeClient {
	return func(srv *providertest.Server, dir string, extra ...string) map[string]any {
		return pyClient(t, srv, dir, "mode", extra...)
	}
}

func tsModeClient(t *testing.T) modeClient {
	return func(srv *providertest.Server, dir string, extra ...string) map[string]any {
		return sdkClient(t, srv, dir, "mode", extra...)
	}
}

// twoCalls: the model runs `touch made.txt`, then writes written.txt,
// then answers.
func twoCalls(t *testing.T) *providertest.Server {
	return providertest.New(t,
		providertest.Reply{ToolCalls: []providertest.ToolCall{{ID: "call-1", Name: "bash", Arguments: `{"command":"touch made.txt"}`}}},
		providertest.Reply{ToolCalls: []providertest.ToolCall{{ID: "call-2", Name: "write", Arguments: `{"path":"written.txt","content":"x"}`}}},
		providertest.Reply{Text: "done"},
	)
}

func exists(dir, name string) bool {
	_, err := os.Stat(filepath.Join(dir, name))
	return err == nil
}

// auto is Claude Code's classifier mode; tiny-go has none, so Bash and
// Write are not allowed without a host to ask (Claude Code denies both
// too when its classifier cannot answer).
func checkAutoDenies(t *testing.T, client modeClient, result string) {
	dir := t.TempDir()
	seen := client(twoCalls(t), dir, "HL_MODE=auto")
	if exists(dir, "made.txt") || exists(dir, "written.txt") {
		t.Error("auto mode ran a call no one allowed")
	}
	rs := resultsOf(seen, result)
	if len(rs) != 1 {
		t.Fatalf("results %v", rs)
	}
	if d, _ := rs[0]["permission_denials"].([]any); len(d) != 2 {
		t.Errorf("permission_denials %v; want Bash and Write", rs[0]["permission_denials"])
	}
	// Each denial is also a system/permission_denied message, as Claude
	// Code's for calls denied without asking.
	var denied []string
	for _, m := range seen["messages"].([]any) {
		mm := m.(map[string]any)
		if mm["subtype"] == "permission_denied" && (mm["type"] == "system" || mm["_class"] == "SystemMessage") {
			d := mm
			if data, ok := mm["data"].(map[string]any); ok {
				d = data // the Python SDK's SystemMessage keeps the message in data
			}
			denied = append(denied, d["tool_name"].(string))
		}
	}
	if strings.Join(denied, ",") != "Bash,Write" {
		t.Errorf("permission_denied messages for %v; want Bash,Write", denied)
	}
}

// set_permission_mode("bypassPermissions") is refused unless launched
// with bypass, and the mode stays: the call is denied.
func checkBypassRefused(t *testing.T, client modeClient) {
	dir := t.TempDir()
	seen := client(twoCalls(t), dir, "HL_MODE=default", "HL_SET=bypassPermissions")
	if set, _ := seen["set"].(string); set == "ok" || !strings.Contains(set, "bypassPermissions") {
		t.Errorf("set_permission_mode(bypassPermissions) answered %q; want an error", set)
	}
	if exists(dir, "made.txt") || exists(dir, "written.txt") {
		t.Error("a call ran after the refused escalation")
	}
}

// acceptEdits lets file-system commands inside the working directory run,
// as Claude Code's does (touch, mkdir, mv, cp, rm, rmdir, sed), and Write.
func checkAcceptEditsTouch(t *testing.T, client modeClient) {
	dir := t.TempDir()
	client(twoCalls(t), dir, "HL_MODE=acceptEdits")
	if !exists(dir, "made.txt") || !exists(dir, "written.txt") {
		t.Errorf("acceptEdits: made.txt %v, written.txt %v; want both", exists(dir, "made.txt"), exists(dir, "written.txt"))
	}
}

func TestPySDKPermissionModes(t *testing.T) {
	t.Run("auto", func(t *testing.T) { checkAutoDenies(t, pyModeClient(t), "ResultMessage") })
	t.Run("bypass", func(t *testing.T) { checkBypassRefused(t, pyModeClient(t)) })
	t.Run("acceptEdits", func(t *testing.T) { checkAcceptEditsTouch(t, pyModeClient(t)) })
}

func TestSDKPermissionModes(t *testing.T) {
	t.Run("auto", func(t *testing.T) { checkAutoDenies(t, tsModeClient(t), "result") })
	t.Run("bypass", func(t *testing.T) { checkBypassRefused(t, tsModeClient(t)) })
	t.Run("acceptEdits", func(t *testing.T) { checkAcceptEditsTouch(t, tsModeClient(t)) })
}
