package agent

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tiny-agent/tiny-go/internal/providertest"
	"github.com/tiny-agent/tiny-go/internal/session"
)

// An approval may replace the call's arguments (the Claude Agent SDK's
// updatedInput): the call runs with them and toolStarted records them, so
// the session says what ran.
func TestApprovalWithArgumentsRunsThem(t *testing.T) {
	var h *harness
	ap := newApprover(t, &h, func(context.Context, ApprovalRequest) (Approval, error) {
		return Approval{Allow: true, Arguments: jsontext.Value(`{"command":"echo updated > marker"}`)}, nil
	})
	h = newHarness(t, []providertest.Reply{
		calls(call("c1", "bash", `{"command":"echo original > marker"}`)),
		text("done"),
	}, withApprove(ap.approve))
	if res := h.run("go"); res.Outcome != session.OutcomeCompleted {
		t.Fatalf("result = %+v", res)
	}
	if b, err := os.ReadFile(h.path("marker")); err != nil || string(b) != "updated\n" {
		t.Fatalf("marker = %q, %v; want the approved arguments' output", b, err)
	}
	h.reduce() // valid under session.md
	found := false
	for _, f := range h.facts() {
		if f.label() == "toolStarted" {
			found = true
			if args, _ := f.Record["arguments"].(map[string]any); args["command"] != "echo updated > marker" {
				t.Fatalf("toolStarted records %v; want the arguments that ran", f.Record["arguments"])
			}
		}
	}
	if !found {
		t.Fatal("no toolStarted")
	}
}

// Arguments that are not an object stop the run with nothing committed
// for the call (the next resume asks again).
func TestApprovalWithBadArgumentsCommitsNothing(t *testing.T) {
	var h *harness
	ap := newApprover(t, &h, func(context.Context, ApprovalRequest) (Approval, error) {
		return Approval{Allow: true, Arguments: jsontext.Value(`["not","an","object"]`)}, nil
	})
	h = newHarness(t, []providertest.Reply{calls(call("c1", "bash", `{"command":"echo ran > marker"}`))}, withApprove(ap.approve))
	_, err := h.agent.Run(context.Background(), "go")
	if err == nil || !strings.Contains(err.Error(), "not a JSON object") {
		t.Fatalf("err = %v", err)
	}
	if _, err := os.Stat(h.path("marker")); !os.IsNotExist(err) {
		t.Fatal("the call ran")
	}
	if strings.Contains(h.labels(), "toolStarted") {
		t.Fatalf("facts: %s", h.labels())
	}
}
