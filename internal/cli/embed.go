package cli

import (
	"context"

	"github.com/tiny-agent/tiny-go/internal/acp"
	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/approval"
	"github.com/tiny-agent/tiny-go/internal/mcp"
	"github.com/tiny-agent/tiny-go/internal/tools"
	"github.com/tiny-agent/tiny-go/internal/ui"
)

// embedding adapts a runner's agent to an ACP host; its methods are no-ops
// on a nil embedding (the terminal).
type embedding struct {
	host acp.Host
	// callbackHooks: the host may add hooks as the session runs (the
	// Agent SDK's hook callbacks), so the hooks runner exists without
	// configured hooks.
	callbackHooks bool
	// permissionMode is the headless driver's mode (Claude Code's name),
	// which hooks report; the driver, not a person, answers its asks, so
	// no permission_prompt notification goes with them.
	permissionMode func() string
}

// elicit puts a server's form to the editor (internal/acp: ACP's
// elicitation/create, else a permission request); a host without its own
// way (the headless runner) asks whether to send the defaults.
func (e *embedding) elicit(ctx context.Context, f mcp.Form) (mcp.ElicitAnswer, error) {
	if e.host.Elicit != nil {
		return e.host.Elicit(ctx, f)
	}
	ans, err := e.ask(ctx, ui.FormPrompt(f))
	switch {
	case err != nil:
		return mcp.ElicitAnswer{Action: mcp.ElicitCancel}, nil
	case ans.Choice == approval.Deny:
		return mcp.ElicitAnswer{Action: mcp.ElicitDecline}, nil
	}
	return mcp.ElicitAnswer{Action: mcp.ElicitAccept, Content: f.Defaults()}, nil
}

func (e *embedding) editor() tools.Editor {
	if e == nil {
		return nil
	}
	return e.host.Editor
}

func (e *embedding) eventSink() func(agent.Event) {
	if e == nil {
		return nil
	}
	return e.host.Events
}

func (e *embedding) wrapApprove(f agent.ApproveFunc) agent.ApproveFunc {
	if e == nil || e.host.Approve == nil || f == nil {
		return f
	}
	return e.host.Approve(f)
}

func (e *embedding) ask(ctx context.Context, p approval.Prompt) (approval.Answer, error) {
	return e.host.Ask(ctx, p)
}
