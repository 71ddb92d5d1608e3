// Package subagents runs the task tool's children: each child is a
// session of its own in the same directory, linked to its parent beside
// both sessions (agents.Link) before it starts, so a parent that resumes
// after a crash continues the same child instead of starting another.
// Its agent is built on the parent's provider, hooks and tools, which the
// process that runs the parent passes in (Config).
package subagents

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/agents"
	"github.com/tiny-agent/tiny-go/internal/approval"
	"github.com/tiny-agent/tiny-go/internal/hooks"
	"github.com/tiny-agent/tiny-go/internal/store"
	"github.com/tiny-agent/tiny-go/internal/tools"
	"github.com/tiny-agent/tiny-go/internal/ui"
)

// Config is what every child of a process is built from. The callbacks
// read the parent's state when a child starts, since it changes (a /model
// switch, a rewind's new session, the cost sink set up later).
type Config struct {
	Defs     []agents.Definition
	Cwd      string
	Fsync    bool
	Provider string // the provider's name in a child session's header
	EnvID    string
	// MaxDepth is how deep children nest (1: children get no task tool).
	MaxDepth int
	// Model is the parent's model now: a definition without one uses it.
	Model func() string
	// Parent is the user's session now (path, id): the children of the
	// task tool that Tool returns are linked to it.
	Parent func() (path, id string)
	// Hooks are the user's hooks for a child session (nil: none).
	Hooks func(id, path, agentType string) (*hooks.Runner, error)
	// Line shows one line of a child's progress.
	Line func(string)
	// Cost adds the price of a child's model request to the parent's.
	Cost func(agent.Event)
	// Build completes a child's agent configuration with what the parent's
	// agent is built on (provider, scrubber, permission rules, protocol
	// identity, limits) and builds it.
	Build func(agent.Config) (*agent.Agent, error)
}

// Children builds and runs the children of one process.
type Children struct {
	cfg      Config
	tools    []tools.Tool // the parent's tools, plan mode applied
	readOnly func() (tools.Tool, error)
	approve  agent.ApproveFunc
	askMu    sync.Mutex // one approval question at a time
}

// New is the children of a process; Attach gives them the parent's tools
// before the first one runs.
func New(cfg Config) *Children {
	if cfg.MaxDepth < 1 {
		cfg.MaxDepth = 1
	}
	return &Children{cfg: cfg}
}

// Tool is the task tool of the user's session.
func (c *Children) Tool() tools.Tool {
	return agents.NewTool(c.cfg.Defs, c.runner(c.cfg.Parent, 0))
}

// Attach gives the children what they are built from once the parent's
// tools and approval hook are final: the tools they may be offered, the
// read-only bash (plan mode's, for read-only agents) and the approval
// they ask through.
func (c *Children) Attach(all []tools.Tool, approve agent.ApproveFunc, readOnly func() (tools.Tool, error)) {
	c.tools, c.approve, c.readOnly = all, approve, readOnly
}

// Definitions are the agent definitions the children are built from.
func (c *Children) Definitions() []agents.Definition {
	return c.cfg.Defs
}

// MaxDepth is how deep subagents nest: 1, children get no task tool,
// unless TINY_AGENT_MAX_DEPTH says otherwise.
func MaxDepth(getenv func(string) string) int {
	if n, err := strconv.Atoi(strings.TrimSpace(getenv("TINY_AGENT_MAX_DEPTH"))); err == nil && n >= 1 {
		return n
	}
	return 1
}

// runner is the Runner of the children of the session parent names,
// which is at depth (the user's session: 0).
func (c *Children) runner(parent func() (path, id string), depth int) agents.Runner {
	return func(ctx context.Context, call agents.Call) tools.Result {
		if err := c.knownTools(call.Agent); err != nil {
			return tools.Result{Content: "Error: the " + call.Agent.Name + " subagent could not run: " + err.Error(), IsError: true}
		}
		path, id := parent()
		res, err := c.run(ctx, path, id, depth, call)
		if err != nil {
			return tools.Result{Content: "Error: the " + call.Agent.Name + " subagent could not run: " + err.Error(), IsError: true}
		}
		return res
	}
}

// run runs the child of call to its end: a new child runs the prompt; a
// child a crash left open resumes (its own recovery: nothing that ran runs
// again); a child that had finished only reports its answer.
func (c *Children) run(ctx context.Context, parentPath, parentID string, depth int, call agents.Call) (tools.Result, error) {
	if call.StartedID == "" {
		return tools.Result{}, errors.New("no toolStarted id for the call")
	}
	st, err := c.open(parentPath, parentID, call)
	if err != nil {
		return tools.Result{}, err
	}
	defer st.Close()
	// The user's hooks guard the child's calls as they guard the
	// parent's; its end is SubagentStop.
	var hr *hooks.Runner
	if c.cfg.Hooks != nil {
		if hr, err = c.cfg.Hooks(st.ID(), st.Path(), call.Agent.Name); err != nil {
			return tools.Result{}, fmt.Errorf("hooks of the subagent: %w", err)
		}
	}
	if hr != nil {
		defer hr.Close()
	}
	ag, err := c.agent(st, depth, call.Agent, hr)
	if err != nil {
		return tools.Result{}, err
	}
	var res agent.Result
	done := make(chan struct{})
	// The child runs on a context of its own: an Esc of the parent aborts
	// it durably (below) instead of cutting it off mid-commit.
	cctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	defer stop()
	// Every question of its calls (an approval, a review of a command's
	// changes) names the child that asks.
	cctx = approval.WithAsker(cctx, call.Agent.Name+" subagent")
	go func() {
		defer close(done)
		switch {
		case ag.Pending():
			res, err = ag.Resume(cctx)
		case len(st.State().Transcript) == 0:
			res, err = ag.Run(cctx, call.Prompt)
		default:
			res = finishedResult(st.State())
		}
	}()
	select {
	case <-done:
	case <-ctx.Done():
		abortChild(ag, done, stop)
	}
	u := st.State().Usage
	return childResult(call.Agent.Name, res, err, &u), nil
}

// open opens the child session of call, or creates it: its link is
// recorded beside the parent (and synced) before the session exists.
func (c *Children) open(parentPath, parentID string, call agents.Call) (*store.Store, error) {
	l, found, err := agents.ChildOf(parentPath, call.StartedID)
	if err != nil {
		return nil, err
	}
	if !found {
		id, err := store.NewID()
		if err != nil {
			return nil, err
		}
		l = agents.Link{Parent: parentID, ToolStartedID: call.StartedID, Child: id, Agent: call.Agent.Name, Description: call.Description}
		if err := agents.RecordChild(parentPath, l); err != nil {
			return nil, err
		}
	}
	opts := store.Options{Fsync: c.cfg.Fsync}
	if _, err := store.PathByID(c.cfg.Cwd, l.Child); err == nil {
		st, err := store.Open(c.cfg.Cwd, l.Child, opts)
		if err == nil {
			if _, ok := agents.ParentOf(st.Path()); !ok {
				// A crash between its creation and its link.
				err = agents.WriteParent(st.Path(), l)
			}
		}
		if err != nil && st != nil {
			st.Close()
			return nil, err
		}
		return st, err
	}
	first := true
	opts.NewID = func() (string, error) {
		if first {
			first = false
			return l.Child, nil
		}
		return store.NewID()
	}
	st, err := store.Create(c.cfg.Cwd, store.NewHeader{Provider: c.cfg.Provider, Model: c.model(call.Agent), EnvironmentIdentity: c.cfg.EnvID}, opts)
	if err != nil {
		return nil, err
	}
	if err := agents.WriteParent(st.Path(), l); err != nil {
		st.Close()
		return nil, err
	}
	return st, nil
}

func (c *Children) model(d agents.Definition) string {
	if d.Model != "" {
		return d.Model
	}
	return c.cfg.Model()
}

// serialApprove puts the children's questions to the user one at a time,
// each naming the child that asks (who).
func (c *Children) serialApprove(who string) agent.ApproveFunc {
	if c.approve == nil {
		return nil
	}
	return func(ctx context.Context, req agent.ApprovalRequest) (agent.Approval, error) {
		c.askMu.Lock()
		defer c.askMu.Unlock()
		return c.approve(approval.WithAsker(ctx, who), req)
	}
}

// show prints a child's progress as whole lines.
func (c *Children) show(label string, ev agent.Event) {
	if line := ui.ChildLine(label, ev); line != "" && c.cfg.Line != nil {
		c.cfg.Line(line)
	}
}

// rollUp adds the price of a child's model request to the parent's cost
// (its tokens reach the parent's session with the task call's result).
func (c *Children) rollUp(ev agent.Event) {
	if mc, ok := ev.(agent.ModelCompleted); ok && c.cfg.Cost != nil {
		c.cfg.Cost(mc)
	}
}
