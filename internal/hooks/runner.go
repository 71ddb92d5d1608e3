package hooks

import (
	"context"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/cctools"
)

// Options configure a Runner.
type Options struct {
	Config *Config
	// Cwd is where hooks run and what they are told; ProjectDir is
	// CLAUDE_PROJECT_DIR and TINY_PROJECT_DIR.
	Cwd, ProjectDir string
	// Env is the hooks' environment, without tiny-go's keys.
	Env []string
	// Scrub masks secret values in a hook's input; nil masks nothing.
	Scrub func(string) string
	// PermissionMode is Claude Code's name for the approval mode;
	// Mode, when set, says it at the moment a hook runs (Shift+Tab and an
	// editor change the mode while tiny-go runs).
	PermissionMode string
	Mode           func() string
	// FailClosed makes a PreToolUse hook that fails block its call.
	FailClosed bool
	// Report shows one line to the user.
	Report func(line string)
	// Start starts a hook's process; nil is exec.Cmd.Start. tiny-go
	// passes its sandbox's Start, so a hook (which a command can plant
	// in .claude/settings.json) is contained as a command is.
	Start func(*exec.Cmd) error
	// Entrypoint is CLAUDE_CODE_ENTRYPOINT in hooks: Claude Code's "cli"
	// for a terminal, "sdk-cli" for print mode and the Agent SDKs.
	Entrypoint string
}

// Runner runs the hooks of one tiny-go process on its current session;
// it is the agent's HookRunner.
type Runner struct {
	opt Options
	// subagent: the runner of a subagent's session (Child), whose end is
	// SubagentStop and whose prompt is its parent's call, not the user's.
	subagent bool

	mu         sync.Mutex
	sessionID  string
	transcript *transcript
	log        *Log
	added      []Hook // by Add
	// promptID is the entry id of the prompt being worked on.
	promptID string
	// started is when each call's PreToolUse hooks ended, by call key.
	started map[string]time.Time
	// originals are the files writes and edits are about to change.
	originals map[string]original
	// parent is a subagent's parent runner and agentType its agent:
	// SubagentStop names the parent's session, as Claude Code does, and
	// the subagent as agent_id.
	parent    *Runner
	agentType string
}

// nextPrompt keys the context SessionStart hooks gave for the next
// prompt, kept beside the session until a prompt takes it (a compaction
// in one process, the prompt in the next).
const nextPrompt = "next-prompt"

var _ agent.HookRunner = (*Runner)(nil)

// New returns a Runner; Attach gives it its session.
func New(opt Options) *Runner {
	if opt.Config == nil {
		opt.Config = &Config{}
	}
	if opt.Report == nil {
		opt.Report = func(string) {}
	}
	return &Runner{opt: opt}
}

// Child is a runner with r's hooks for a subagent's session at path (id):
// the PreToolUse and PostToolUse hooks guard the subagent's calls as they
// guard the parent's, their decisions are kept beside the subagent's
// session, and its end runs the SubagentStop hooks instead of Stop. The
// caller closes it.
func (r *Runner) Child(id, path, agentType string) (*Runner, error) {
	c := New(r.opt)
	c.subagent, c.parent, c.agentType = true, r, agentType
	r.mu.Lock()
	c.added = append([]Hook(nil), r.added...)
	c.promptID = r.promptID
	r.mu.Unlock()
	if err := c.Attach(id, path); err != nil {
		return nil, err
	}
	return c, nil
}

// Attach makes the session at path (id) the current one: its hooks
// record is read, and a PostToolUse hook an earlier process left
// unfinished is reported (it is not run again).
func (r *Runner) Attach(id, path string) error {
	l, err := OpenLog(path)
	if err != nil {
		return err
	}
	r.mu.Lock()
	old := r.log
	r.sessionID, r.transcript, r.log = id, &transcript{session: path}, l
	r.mu.Unlock()
	if old != nil {
		_ = old.Close()
	}
	calls := l.Interrupted()
	slices.Sort(calls)
	for _, c := range calls {
		r.report(fmt.Sprintf("the PostToolUse hooks of tool call %s were interrupted (tiny-go stopped while they ran); they are not run again", callID(c)))
		// Reported once: the next resume does not say it again.
		if err := l.add(record{Post: c, State: "interrupted"}); err != nil {
			return err
		}
	}
	return nil
}

// Close closes the session's record.
func (r *Runner) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.log == nil {
		return nil
	}
	return r.log.Close()
}

func (r *Runner) current() *Log {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.log
}

// Any reports whether hooks of ev are configured.
func (r *Runner) Any(ev Event) bool { return len(r.on(ev)) > 0 }

func (r *Runner) report(line string) { r.opt.Report(line) }

func (r *Runner) common(ev Event, in *Input) {
	in.SessionID, in.TranscriptPath = r.ids(ev)
	r.mu.Lock()
	in.PromptID = r.promptID
	r.mu.Unlock()
	if ev == SubagentStop && r.parent != nil {
		in.AgentID, in.AgentTranscriptPath = in.SessionID, in.TranscriptPath
		in.AgentType = &r.agentType
		in.SessionID, in.TranscriptPath = r.parent.ids(ev)
	}
	in.Cwd, in.PermissionMode, in.HookEventName = r.opt.Cwd, r.opt.PermissionMode, ev
	if r.opt.Mode != nil {
		in.PermissionMode = r.opt.Mode()
	}
}

// ids are the session id and the transcript, brought up to date with
// the session before a hook reads it (Claude Code's format); a failure is
// one line, and the hook still runs.
func (r *Runner) ids(ev Event) (id, transcript string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.transcript != nil {
		path, err := r.transcript.Path(r.sessionID, r.opt.Cwd)
		if err != nil {
			r.report(fmt.Sprintf("hook %s: %v", ev, err))
		}
		transcript = path
	}
	return r.sessionID, transcript
}

func (r *Runner) env() []string {
	env := slices.Clip(r.opt.Env)
	entry := r.opt.Entrypoint
	if entry == "" {
		entry = "cli"
	}
	// Hooks written for Claude Code tell it from a terminal by these.
	return append(env, "CLAUDE_PROJECT_DIR="+r.opt.ProjectDir, "TINY_PROJECT_DIR="+r.opt.ProjectDir,
		"CLAUDECODE=1", "CLAUDE_CODE_ENTRYPOINT="+entry)
}

// callID is the tool call id of a call key.
func callID(key string) string {
	if _, id, ok := strings.Cut(key, "/"); ok {
		return id
	}
	return key
}

// SessionStarted runs the SessionStart hooks (source: startup, resume,
// clear or compact); what they print becomes context for the next
// prompt.
func (r *Runner) SessionStarted(ctx context.Context, source string) {
	v := r.fire(ctx, SessionStart, []string{source}, &Input{Source: source})
	l := r.current()
	if len(v.context) == 0 || l == nil {
		return
	}
	if err := l.add(record{Context: nextPrompt, Text: strings.Join(v.context, "\n\n")}); err != nil {
		r.report(fmt.Sprintf("hook SessionStart: its context is lost: %v", err))
	}
}

// SessionEnded runs the SessionEnd hooks (reason: clear, logout,
// prompt_input_exit, other).
func (r *Runner) SessionEnded(ctx context.Context, reason string) {
	r.fire(ctx, SessionEnd, []string{reason}, &Input{Reason: reason})
}

// Compacting runs the PreCompact hooks (trigger: manual or auto), or the
// PostCompact hooks once it is done.
func (r *Runner) Compacting(ctx context.Context, trigger, instructions string, done bool) {
	ev := PreCompact
	if done {
		ev = PostCompact
	}
	r.fire(ctx, ev, []string{trigger}, &Input{Trigger: trigger, CustomInstructions: &instructions})
}

// Notified runs the Notification hooks (type: permission_prompt,
// idle_prompt).
func (r *Runner) Notified(ctx context.Context, kind, message string) {
	r.fire(ctx, Notification, []string{kind}, &Input{Message: message, NotificationType: kind})
}

// PromptSubmitted runs the UserPromptSubmit hooks before a prompt is
// accepted. Their context (and SessionStart's) is recorded for entryID.
func (r *Runner) PromptSubmitted(ctx context.Context, entryID, prompt string) (string, error) {
	if r.subagent {
		return "", nil // the parent's task call, not a prompt the user submitted
	}
	r.mu.Lock()
	r.promptID = entryID
	r.mu.Unlock()
	v := r.fire(ctx, UserPromptSubmit, nil, &Input{Prompt: prompt})
	if err := ctx.Err(); err != nil {
		return "", err // stopped: nothing recorded, the prompt is not accepted
	}
	switch {
	case v.block:
		return joinReasons(v.reason, "(no reason given)"), nil
	case v.stop:
		return firstLine(v.stopReason, "(no reason given)"), nil
	}
	l := r.current()
	if l == nil {
		return "", nil
	}
	var texts []string
	pending := l.Context(nextPrompt)
	if pending != "" {
		texts = append(texts, pending)
	}
	texts = append(texts, v.context...)
	if len(texts) == 0 {
		return "", nil
	}
	text := "Context added by hooks:\n" + strings.Join(texts, "\n\n")
	if err := l.add(record{Context: entryID, Text: text}); err != nil {
		return "", err
	}
	if pending != "" {
		return "", l.add(record{Context: nextPrompt})
	}
	return "", nil
}

// Context is what hooks added at entryID.
func (r *Runner) Context(entryID string) string {
	if l := r.current(); l != nil {
		return l.Context(entryID)
	}
	return ""
}

func joinReasons(rs []string, empty string) string {
	var parts []string
	for _, s := range rs {
		if s = strings.TrimSpace(s); s != "" {
			parts = append(parts, s)
		}
	}
	if len(parts) == 0 {
		return empty
	}
	return strings.Join(parts, "\n")
}

// toolNames are a call's names (tiny-go's and Claude Code's) and its
// input in Claude Code's shape.
func (r *Runner) toolInput(call agent.HookCall) ([]string, Input) {
	cc := cctools.ToClaude(call.Tool, call.Arguments, r.opt.Cwd)
	return cctools.Names(call.Tool, call.Arguments), Input{ToolName: cc.Name, ToolInput: cc.Input, ToolUseID: call.ToolCallID}
}
