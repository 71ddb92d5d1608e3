package headless

import (
	"strings"
	"testing"
)

func TestNewOptions(t *testing.T) {
	bad := map[string]Flags{
		"--output-format":          {Output: "xml"},
		"--input-format":           {Input: "yaml"},
		"needs --input-format":     {PromptTool: "stdio"},
		"not through the MCP tool": {Input: "stream-json", PromptTool: "mcp__perm__ask"},
		"--max-turns":              {MaxTurns: -1},
		"come on stdin":            {Input: "stream-json", Prompt: "hi"},
		"--permission-mode":        {PermissionMode: "yolo"},
	}
	for want, f := range bad {
		if _, err := NewOptions(f, "v"); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%+v: error %v; want one mentioning %q", f, err, want)
		}
	}
	o, err := NewOptions(Flags{Input: "stream-json", Output: "stream-json", PromptTool: "stdio", Allowed: []string{"Bash(git log:*),Read"}}, "v")
	if err != nil || !o.StreamInput || !o.PromptTool || o.Mode != ModeDefault || len(o.Rules.Allow) != 2 {
		t.Fatalf("options %+v, %v", o, err)
	}
	if o, _ := NewOptions(Flags{SkipPermissions: true}, "v"); o.Mode != ModeBypass || o.Output != FormatText {
		t.Errorf("--dangerously-skip-permissions: %+v", o)
	}
	if o, _ := NewOptions(Flags{SkipPermissions: true, PermissionMode: "manual"}, "v"); o.Mode != ModeDefault {
		t.Errorf("manual is default: %+v", o)
	}
	if o, _ := NewOptions(Flags{AutoApproval: true, PermissionMode: "plan"}, "v"); o.Mode != ModePlan {
		t.Errorf("an explicit --permission-mode wins: %+v", o)
	}
}
