package approval

import (
	"context"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/agent"
)

func TestSwitchCyclesAndDecides(t *testing.T) {
	s := NewSwitch(Ask)
	if s.Next() != Auto || s.Next() != Plan || !s.Planning() || s.Next() != Ask {
		t.Fatal("the cycle is ask -> auto -> plan -> ask")
	}
	asked := 0
	hook := s.Hook(func(context.Context, agent.ApprovalRequest) (agent.Approval, error) {
		asked++
		return agent.Approval{Allow: false}, nil
	})
	ctx := context.Background()
	bash := agent.ApprovalRequest{Tool: "bash", Builtin: true}
	if a, _ := hook(ctx, bash); a.Allow || asked != 1 {
		t.Fatal("ask mode asks")
	}
	for _, tool := range []string{"todo_write", "task"} {
		if a, _ := hook(ctx, agent.ApprovalRequest{Tool: tool, Builtin: true}); !a.Allow || asked != 1 {
			t.Fatalf("%s was asked about", tool)
		}
	}
	if a, _ := hook(ctx, agent.ApprovalRequest{Tool: "task"}); a.Allow || asked != 2 {
		t.Fatal("an MCP tool named task is asked about")
	}
	for _, m := range []Mode{Auto, Plan} {
		s.Set(m)
		if a, _ := hook(ctx, bash); !a.Allow || asked != 2 {
			t.Fatalf("%s mode asked", m)
		}
	}
	// review is ask except for the commands the gate reviews after.
	s.Set(Review)
	if a, _ := hook(ctx, agent.ApprovalRequest{Tool: "write", Builtin: true}); a.Allow || asked != 3 {
		t.Fatal("review mode let a write run without asking")
	}
	if NewSwitch(Ask).Hook(nil) != nil || (*Switch)(nil).Mode() != Auto {
		t.Fatal("nil cases")
	}
	if _, err := ParseMode("plan"); err != nil {
		t.Fatal(err)
	}
}
