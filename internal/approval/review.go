package approval

import (
	"context"

	"github.com/tiny-agent/tiny-go/internal/agent"
)

// ReviewAfter makes the gate let built-in bash calls run without asking
// while ok() holds (their commands run sealed over a private view of the
// tree): Review asks about what they changed instead. A command that
// needs more than a sealed run (Unsealed) is asked about first.
func (g *Gate) ReviewAfter(ok func() bool) { g.reviewed = ok }

func (g *Gate) reviewsAfter(req agent.ApprovalRequest) bool {
	if g.reviewed == nil || !req.Builtin || req.Tool != "bash" || !g.reviewed() {
		return false
	}
	cmd, ok := stringField(req.Arguments, "command")
	return ok && !Unsealed(cmd)
}

// AcceptEditsWhile makes the gate let the calls EditsInside allows run
// without asking while ok() holds (edits mode is on).
func (g *Gate) AcceptEditsWhile(ok func() bool) { g.editing = ok }

func (g *Gate) acceptsEdit(req agent.ApprovalRequest) bool {
	return g.editing != nil && g.editing() && EditsInside(req, g.workDir)
}

// Review shows what a command changed in its private view and asks
// whether to apply it: y (or a) applies, n or Esc discards.
func (g *Gate) Review(ctx context.Context, command string, changes []string) (bool, error) {
	p := Prompt{Tool: "bash", Action: "Apply what this command changed", Detail: limitLines(append([]string{"$ " + command, ""}, changes...)), Asker: askerOf(ctx)}
	ans, err := g.ask(ctx, p)
	if err != nil {
		return false, err
	}
	return ans.Choice == Once || ans.Choice == Always, nil
}
