package subagents

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/session"
	"github.com/tiny-agent/tiny-go/internal/tools"
)

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
