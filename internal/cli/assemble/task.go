package assemble

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/agents"
	"github.com/tiny-agent/tiny-go/internal/approval"
	"github.com/tiny-agent/tiny-go/internal/hooks"
	"github.com/tiny-agent/tiny-go/internal/session"
	"github.com/tiny-agent/tiny-go/internal/store"
	"github.com/tiny-agent/tiny-go/internal/tools"
	"github.com/tiny-agent/tiny-go/internal/ui"
)

// Subagents: the task tool's Runner. Each child is a session of its own
// in the same directory, linked to its parent beside both sessions
// (agents.Link) before it starts, so a parent that resumes after a crash
// continues the same child instead of starting another.

// children is what every child of this process is built from, fixed when
// the parent's agent is built.
type children struct {
	a        *Runner
	Defs     []agents.Definition
	tools    []tools.Tool // the parent's tools, plan mode applied
	readOnly func() (tools.Tool, error)
	envID    string
	maxDepth int
	approve  agent.ApproveFunc
	askMu    sync.Mutex // one approval question at a time
}

// maxAgentDepth is how deep subagents nest: 1, children get no task tool,
// unless TINY_AGENT_MAX_DEPTH says otherwise.
func maxAgentDepth(getenv func(string) string) int {
	if n, err := strconv.Atoi(strings.TrimSpace(getenv("TINY_AGENT_MAX_DEPTH"))); err == nil && n >= 1 {
		return n
	}
	return 1
}

// runner is the Runner of the children of the session at parentPath,
// which is at depth (the user's session: 0).
func (c *children) runner(parent func() (path, id string), depth int) agents.Runner {
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
func (c *children) run(ctx context.Context, parentPath, parentID string, depth int, call agents.Call) (tools.Result, error) {
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
	hr, err := c.a.UserHooks.Child(st.ID(), st.Path(), call.Agent.Name)
	if err != nil {
		return tools.Result{}, fmt.Errorf("hooks of the subagent: %w", err)
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

// finishedResult is the outcome of a child that ended before its parent
// recorded it (a crash in between).
func finishedResult(st *session.State) agent.Result {
	res := agent.Result{Outcome: session.OutcomeCompleted}
	if n := len(st.Transcript); n > 0 {
		if m := st.Transcript[n-1]; m.Role == session.RoleAssistant && m.Content != nil {
			res.Answer = *m.Content
			return res
		}
	}
	res.Outcome = session.OutcomeAborted
	return res
}

// childResult is the parent's tool result: the child's last answer.
func childResult(name string, res agent.Result, err error, u *session.Usage) tools.Result {
	out := tools.Result{Usage: u}
	switch {
	case err != nil:
		out.Content, out.IsError = fmt.Sprintf("Error: the %s subagent stopped: %v", name, err), true
	case res.Blocked != "":
		out.Content, out.IsError = fmt.Sprintf("Error: the %s subagent is blocked (%s) and cannot resume.", name, res.Blocked), true
	case res.Outcome == session.OutcomeAborted:
		out.Content, out.IsError = fmt.Sprintf("Error: the %s subagent was aborted before it answered.", name), true
	case res.Outcome == session.OutcomeFailed:
		msg := "it failed"
		if res.Error != nil {
			msg = res.Error.Message
		}
		out.Content, out.IsError = fmt.Sprintf("Error: the %s subagent failed: %s", name, msg), true
	case strings.TrimSpace(res.Answer) == "":
		out.Content = "(the " + name + " subagent ended without a report)"
	default:
		out.Content = res.Answer
	}
	return out
}

// open opens the child session of call, or creates it: its link is
// recorded beside the parent (and synced) before the session exists.
func (c *children) open(parentPath, parentID string, call agents.Call) (*store.Store, error) {
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
	opts := store.Options{Fsync: c.a.Flags.Fsync}
	if _, err := store.PathByID(c.a.Cwd, l.Child); err == nil {
		st, err := store.Open(c.a.Cwd, l.Child, opts)
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
	st, err := store.Create(c.a.Cwd, store.NewHeader{Provider: c.a.Wire.Access.Name, Model: c.model(call.Agent), EnvironmentIdentity: c.envID}, opts)
	if err != nil {
		return nil, err
	}
	if err := agents.WriteParent(st.Path(), l); err != nil {
		st.Close()
		return nil, err
	}
	return st, nil
}

func (c *children) model(d agents.Definition) string {
	if d.Model != "" {
		return d.Model
	}
	return c.a.Wire.Model
}

// serialApprove puts the children's questions to the user one at a time,
// each naming the child that asks (who).
func (c *children) serialApprove(who string) agent.ApproveFunc {
	if c.approve == nil {
		return nil
	}
	return func(ctx context.Context, req agent.ApprovalRequest) (agent.Approval, error) {
		c.askMu.Lock()
		defer c.askMu.Unlock()
		return c.approve(approval.WithAsker(ctx, who), req)
	}
}

// show prints a child's progress as whole lines: in the terminal above
// the live area, else on stderr (not with --json, whose stdout carries
// the parent's events).
func (c *children) show(label string, ev agent.Event) {
	line := ui.ChildLine(label, ev)
	if line == "" {
		return
	}
	if c.a.UiObserver.Line(line) {
		return
	}
	if p := c.a.progress(); p != nil {
		p.Line(line)
	}
}

// rollUp adds the price of a child's model request to the parent's cost
// (its tokens reach the parent's session with the task call's result).
func (c *children) rollUp(ev agent.Event) {
	if mc, ok := ev.(agent.ModelCompleted); ok && c.a.costSink != nil {
		c.a.costSink(mc)
	}
}

// abortChild aborts a running child durably and waits for it to end. An
// abort that finds nothing open yet (the child is about to accept its
// prompt) is tried again until it takes or the child ends; past 10 s the
// child is stopped hard, and what is open reconciles on the next resume.
func abortChild(ag *agent.Agent, done <-chan struct{}, stop context.CancelFunc) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		ok, err := ag.Abort(context.Background())
		if ok || err != nil || time.Now().After(deadline) {
			break
		}
		select {
		case <-done:
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
	select {
	case <-done:
	case <-time.After(time.Until(deadline)):
		stop()
		<-done
	}
}

// agentHooks is hr as the agent's hooks: a nil runner is no hooks (not a
// non-nil interface holding nil).
func agentHooks(hr *hooks.Runner) agent.HookRunner {
	if hr == nil {
		return nil
	}
	return hr
}

// knownTools refuses an agent whose tools list names only tools this
// session does not have, as Claude Code refuses to start it (an empty list
// is an agent without tools, which runs).
func (c *children) knownTools(d agents.Definition) error {
	if len(d.Tools) == 0 {
		return nil
	}
	for _, t := range c.tools {
		if d.Offers(t.Definition().Name) {
			return nil
		}
	}
	return fmt.Errorf("none of its tools (%s) exists in this session; fix the tools line of %s", strings.Join(d.Tools, ", "), d.Path)
}
