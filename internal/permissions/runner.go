package permissions

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/tiny-agent/tiny-go/internal/agent"
)

// Runner is the agent's HookRunner with the rules in front: a deny rule
// settles a call before any hook or approval, an ask rule makes the user
// be asked, an allow rule lets the call run without asking. What the
// user's hooks (Inner, which may be nil) decide comes between: a hook's
// deny wins over an allow or ask rule, never over a deny rule.
type Runner struct {
	Inner    agent.HookRunner
	Settings *Settings
	// CanAsk reports whether a user can be asked now (no: --approval
	// auto in a one-shot run); then an ask rule refuses the call.
	CanAsk func() bool
	// AcceptEdits allows write and edit under the working directory and
	// the additional directories without asking (defaultMode
	// acceptEdits).
	AcceptEdits bool
	// Skills are the skills with allowed-tools: reading one's file puts
	// it in use, and its tools need no approval from then on.
	Skills []Skill
}

// Skill is a skill's file and the rules its allowed-tools stand for.
type Skill struct {
	Name, Path string
	Allowed    []string
}

// skillRead puts the skill whose file a read call reads in use.
func (p *Runner) skillRead(call agent.HookCall) {
	if call.Tool != "read" || len(p.Skills) == 0 {
		return
	}
	c := p.Settings.describe(call.Tool, call.Arguments)
	for _, sk := range p.Skills {
		for _, path := range c.paths {
			if path == sk.Path {
				p.Settings.AllowForSession(sk.Allowed, "skill "+sk.Name)
				return
			}
		}
	}
}

var _ agent.HookRunner = (*Runner)(nil)

// DeniedContent is the result of a call a deny rule refused.
func DeniedContent(r *Rule) string {
	return fmt.Sprintf("Error: Permission to use %s was denied by the permission rule %s in %s; it was not executed.", r.tool, r.Text, r.Source)
}

// NoAskContent is the result of a call an ask rule wanted approved where
// nobody can be asked.
func NoAskContent(r *Rule) string {
	return fmt.Sprintf("Error: The permission rule %s in %s asks for the user's approval of this tool call, and this session cannot ask (approval auto); it was not executed.", r.Text, r.Source)
}

// BeforeTool implements agent.HookRunner.
func (p *Runner) BeforeTool(ctx context.Context, call agent.HookCall) (agent.ToolDecision, error) {
	kind, rule := p.Settings.Decide(call.Tool, call.Arguments)
	if kind == Deny {
		return agent.ToolDecision{Decision: agent.DecisionDeny, Reason: "permission rule " + rule.Text, Content: DeniedContent(rule)}, nil
	}
	p.skillRead(call)
	var dec agent.ToolDecision
	if p.Inner != nil {
		var err error
		if dec, err = p.Inner.BeforeTool(ctx, call); err != nil || dec.Decision == agent.DecisionDeny {
			return dec, err
		}
		if dec.Arguments != nil {
			// A hook's updatedInput is judged again: it must not reach
			// what the model's input could not.
			if k, r := p.Settings.Decide(call.Tool, dec.Arguments); k == Deny {
				return agent.ToolDecision{Decision: agent.DecisionDeny, Reason: "permission rule " + r.Text, Content: DeniedContent(r)}, nil
			} else if k != "" {
				kind, rule = k, r
			}
		}
	}
	switch {
	case kind == Ask && (p.CanAsk == nil || !p.CanAsk()):
		return agent.ToolDecision{Decision: agent.DecisionDeny, Reason: "permission rule " + rule.Text, Content: NoAskContent(rule)}, nil
	case kind == Ask:
		dec.Decision = agent.DecisionAsk
	case dec.Decision != agent.DecisionNone:
	case kind == Allow, p.acceptsEdit(call, dec):
		dec.Decision = agent.DecisionAllow
	}
	return dec, nil
}

// acceptsEdit: under acceptEdits, write and edit inside the working
// directory or an additional directory run without asking.
func (p *Runner) acceptsEdit(call agent.HookCall, dec agent.ToolDecision) bool {
	if !p.AcceptEdits || (call.Tool != "write" && call.Tool != "edit") {
		return false
	}
	args := call.Arguments
	if dec.Arguments != nil {
		args = dec.Arguments
	}
	c := p.Settings.describe(call.Tool, args)
	if len(c.paths) == 0 {
		return false
	}
	roots := []string{p.Settings.cwd}
	for _, d := range p.Settings.AdditionalDirectories {
		roots = append(roots, d.Path)
	}
	for _, path := range c.paths {
		inside := false
		for _, r := range roots {
			if rel, err := filepath.Rel(r, path); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
				inside = true
			}
		}
		if !inside {
			return false
		}
	}
	return true
}

// PromptSubmitted implements agent.HookRunner.
func (p *Runner) PromptSubmitted(ctx context.Context, entryID, prompt string) (string, error) {
	if p.Inner == nil {
		return "", nil
	}
	return p.Inner.PromptSubmitted(ctx, entryID, prompt)
}

// AfterTool implements agent.HookRunner.
func (p *Runner) AfterTool(ctx context.Context, call agent.HookCall, result agent.HookResult) {
	if p.Inner != nil {
		p.Inner.AfterTool(ctx, call, result)
	}
}

// Stopped implements agent.HookRunner.
func (p *Runner) Stopped(ctx context.Context, answer string, active bool) string {
	if p.Inner == nil {
		return ""
	}
	return p.Inner.Stopped(ctx, answer, active)
}

// Context implements agent.HookRunner.
func (p *Runner) Context(entryID string) string {
	if p.Inner == nil {
		return ""
	}
	return p.Inner.Context(entryID)
}
