// What every front end runs on an assembled Runner: a prompt (with the
// !commands before it), a skill's shorthand, signals into the durable
// abort, and the notes that follow a tool call.

package assemble

import (
	"context"
	"fmt"
	"strings"

	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/cli/promptwire"
	"github.com/tiny-agent/tiny-go/internal/cli/sessionopen"
	"github.com/tiny-agent/tiny-go/internal/interrupt"
	"github.com/tiny-agent/tiny-go/internal/planmode"
	"github.com/tiny-agent/tiny-go/internal/prompt"
	"github.com/tiny-agent/tiny-go/internal/session"
)

// expand turns "/skill:name text" (or "/name text" for a skill's name)
// into the skill's message, and puts the skill in use.
func (a *Runner) Expand(text string) (string, error) {
	text = promptwire.SkillShorthand(text, a.Skills)
	msg, ok, err := prompt.ExpandSkill(text, a.Skills)
	if err != nil {
		return "", err
	}
	if ok {
		name, _, _ := strings.Cut(strings.TrimPrefix(text, prompt.SkillCommandPrefix), " ")
		a.Guard.SkillInUse(a.Skills, strings.TrimSpace(name))
		return msg, nil
	}
	return text, nil
}

// onSignals routes SIGINT, SIGTERM and SIGHUP into the abort path, by the
// interrupt policy: the abort intent is made durable, the active phase is
// signalled, and the driving goroutine reconciles and returns. A signal
// with nothing to abort, or one after the policy's grace while the abort
// is under way, stops the process at once (hardStop); whatever was in
// flight stays open for the next resume.
func (a *Runner) OnSignals(hardStop context.CancelFunc) (stop func()) {
	sigs, stopNotify := interrupt.Notify()
	done := make(chan struct{})
	go func() {
		var policy interrupt.Policy
		for {
			select {
			case <-sigs:
				switch policy.Interrupt(true) {
				case interrupt.Abort:
					ok, err := a.Agent.Abort(context.Background())
					if err != nil {
						fmt.Fprintf(a.IO.Stderr, "tiny-go: abort: %v\n", err)
					}
					if !ok {
						hardStop()
					}
				case interrupt.Hold:
					fmt.Fprintln(a.IO.Stderr, interrupt.HoldHint)
				default:
					hardStop()
				}
			case <-done:
				return
			}
		}
	}()
	return func() {
		stopNotify()
		close(done)
	}
}

// blockedMessage explains a blocked resume and the ways out.
func BlockedMessage(id, reason string) string {
	why := map[string]string{
		"configuration_changed":      "the provider, model, system prompt or tools differ from those the open step was started with",
		"environment_changed":        "a started tool ran in another environment (TINY_AGENT_ENVIRONMENT_IDENTITY or working directory)",
		"replay_declaration_changed": "a started tool was declared safe to replay but no longer is",
		"attempts_exhausted":         "the model request was already retried once",
	}[reason]
	return fmt.Sprintf("session %s is blocked (%s): %s. Restore the configuration it was started with and resume, or run: tiny-go session abort %s", id, reason, why, id)
}

// run runs prompt on the current agent, preceded by the user's
// !commands since the last prompt.
func (a *Runner) Run(ctx context.Context, prompt string) (agent.Result, error) {
	text, sent := sessionopen.WithShell(a.Store.Path(), planmode.Remind(prompt, a.Mode.Planning()))
	res, err := a.Agent.Run(ctx, text)
	if accepted(a.Store.State(), text) {
		sent()
	}
	return a.imageRejected(res), err
}

// imageRejected goes on without images when the model failed over one
// (promptwire.ImageRejected).
func (a *Runner) imageRejected(res agent.Result) agent.Result {
	return promptwire.ImageRejected(res, a.Agent.Config().Images != nil, a.Store.State, func() error {
		ag, err := a.RebuiltAgent(func(cfg *agent.Config) { cfg.Images = nil })
		if err == nil {
			a.Agent = ag
		}
		return err
	})
}

// ResultNote is the agent's ResultNote: the language servers'
// diagnostics, then nested instruction files (promptwire.ResultNote).
func (a *Runner) ResultNote() agent.ResultNote {
	var st *session.State
	if a.Store != nil {
		st = a.Store.State()
	}
	return promptwire.ResultNote(a.Cwd, a.Guard.HiddenPaths(), st, a.LSP.Note())
}

// accepted reports whether the newest user entry of st is text (the run
// that carries it was accepted, however it ended).
func accepted(st *session.State, text string) bool {
	for i := len(st.Transcript) - 1; i >= 0; i-- {
		if m := st.Transcript[i]; m.Role == session.RoleUser {
			return m.Content != nil && *m.Content == text
		}
	}
	return false
}
