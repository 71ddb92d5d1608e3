package tools

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/netproxy"
	"github.com/tiny-agent/tiny-go/internal/sandbox"
)

// Under --network rules, what the proxy refused a command is one line
// per host after its output: in the bash result, and at the end of a bg
// command's log. (No rule allows blocked.test, so the proxy refuses it
// before resolving anything.)
func TestNetworkRulesRefusalsEndTheResults(t *testing.T) {
	if sandbox.ABI() == 0 {
		t.Skip("this kernel has no Landlock")
	}
	if _, err := exec.LookPath("curl"); err != nil {
		t.Fatalf("curl is needed (.ci/run installs it): %v", err)
	}
	tools, work, _ := sandboxedTools(t, sandbox.Workspace, func(p *sandbox.Policy) {
		p.NetworkRules = netproxy.New(netproxy.Config{})
	})
	line := "network: blocked blocked.test — allow it with WebFetch(domain:blocked.test) in .claude/settings.json"
	curl := `curl -s -o /dev/null -w '%{http_code}\n' http://blocked.test/; curl -s -o /dev/null -w '%{http_code}\n' http://blocked.test/again`
	res := call(t, tools["bash"], map[string]any{"command": curl})
	if want := "403\n403\n\n" + line + " (2 connections)"; res.Content != want || res.IsError {
		t.Fatalf("bash result %+v, want %q", res, want)
	}
	res = call(t, tools["bash"], map[string]any{"command": "echo fine"})
	if res.Content != "fine\n" {
		t.Fatalf("a command the proxy refused nothing: %q", res.Content)
	}
	id, _ := bgStart(t, tools["bg"], curl)
	waitStatus(t, tools["bg"], id, "exited (code 0)")
	waitFileContains(t, filepath.Join(work, ".tiny-agent", "bg", id+".log"), "403\n403\n"+line+" (2 connections)\n")
	if logs := call(t, tools["bg"], map[string]any{"action": "logs", "id": id}); !strings.Contains(logs.Content, line) {
		t.Fatalf("bg logs %q", logs.Content)
	}
}
