package assemble

import (
	"context"

	"github.com/tiny-agent/tiny-go/internal/acp"
	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/approval"
	"github.com/tiny-agent/tiny-go/internal/mcp"
	"github.com/tiny-agent/tiny-go/internal/tools"
	"github.com/tiny-agent/tiny-go/internal/ui"
)

// Embedding adapts a Runner's agent to an ACP host; its methods are no-ops
// on a nil embedding (the terminal).
type Embedding struct {
	Host acp.Host
	// callbackHooks: the host may add hooks as the session runs (the
	// Agent SDK's hook callbacks), so the hooks runner exists without
	// configured hooks.
	CallbackHooks bool
	// permissionMode is the headless driver's mode (Claude Code's name),
	// which hooks report; the driver, not a person, answers its asks, so
	// no permission_prompt notification goes with them.
	PermissionMode func() string
}

// elicit puts a server's form to the editor (internal/acp: ACP's
// elicitation/create, else a permission request); a host without its own
// way (the headless runner) asks whether to send the defaults.
func (e *Embedding) elicit(ctx context.Context, f mcp.Form) (mcp.ElicitAnswer, error) {
	if e.Host.Elicit != nil {
		return e.Host.Elicit(ctx, f)
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

func (e *Embedding) editor() tools.Editor {
	if e == nil {
		return nil
	}
	return e.Host.Editor
}

func (e *Embedding) eventSink() func(agent.Event) {
	if e == nil {
		return nil
	}
	return e.Host.Events
}

func (e *Embedding) WrapApprove(f agent.ApproveFunc) agent.ApproveFunc {
	if e == nil || e.Host.Approve == nil || f == nil {
		return f
	}
	return e.Host.Approve(f)
}

func (e *Embedding) ask(ctx context.Context, p approval.Prompt) (approval.Answer, error) {
	return e.Host.Ask(ctx, p)
}
