package hooks

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Input is what a hook reads on stdin: the fields of every event, then
// the event's own (Claude Code's names and shapes).
type Input struct {
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"`
	Cwd            string `json:"cwd"`
	PermissionMode string `json:"permission_mode"`
	HookEventName  Event  `json:"hook_event_name"`
	// PromptID is the entry id of the prompt being worked on (Claude
	// Code's prompt_id), once there is one.
	PromptID string `json:"prompt_id,omitzero"`

	ToolName             string         `json:"tool_name,omitzero"`
	ToolInput            jsontext.Value `json:"tool_input,omitzero"`
	ToolUseID            string         `json:"tool_use_id,omitzero"`
	ToolResponse         jsontext.Value `json:"tool_response,omitzero"`
	Error                string         `json:"error,omitzero"`
	IsInterrupt          *bool          `json:"is_interrupt,omitzero"`
	Prompt               string         `json:"prompt,omitzero"`
	StopHookActive       *bool          `json:"stop_hook_active,omitzero"`
	LastAssistantMessage string         `json:"last_assistant_message,omitzero"`
	Source               string         `json:"source,omitzero"`
	Trigger              string         `json:"trigger,omitzero"`
	CustomInstructions   *string        `json:"custom_instructions,omitzero"`
	Reason               string         `json:"reason,omitzero"`
	Message              string         `json:"message,omitzero"`
	NotificationType     string         `json:"notification_type,omitzero"`
	// DurationMS is how long a call ran, from its PreToolUse hooks' end
	// to its result (PostToolUse, PostToolUseFailure).
	DurationMS *int64 `json:"duration_ms,omitzero"`
	// A SubagentStop's subagent: its session id, agent and transcript.
	AgentID             string  `json:"agent_id,omitzero"`
	AgentType           *string `json:"agent_type,omitzero"`
	AgentTranscriptPath string  `json:"agent_transcript_path,omitzero"`
}

// verdict is what the hooks of one event said together.
type verdict struct {
	ran bool // at least one hook ran
	// block is an exit 2, a decision "block" or a deny; reason says why.
	block  bool
	reason []string
	// decision is PreToolUse's strongest: deny > ask > allow.
	decision, decisionReason string
	updated                  jsontext.Value
	context                  []string
	stop                     bool // continue: false
	stopReason               string
	// failed are the hooks that crashed, timed out, were missing or
	// printed what cannot be read, one reason each (fail-closed guards).
	failed     []string
	permission *PermissionAnswer
}

// maxContext bounds what one hook adds to the model's context.
const maxContext = 10000

// fire runs the hooks of ev whose matcher matches one of names (every
// hook of ev when names is nil), one after another, in the order they
// were configured, and reads what they said.
func (r *Runner) fire(ctx context.Context, ev Event, names []string, in *Input) verdict {
	var v verdict
	var hooks []Hook
	for _, h := range r.on(ev) {
		if names == nil || h.Matches(names...) {
			hooks = append(hooks, h)
		}
	}
	if len(hooks) == 0 {
		return v
	}
	r.common(ev, in)
	data, err := json.Marshal(in)
	if err != nil {
		r.report(fmt.Sprintf("hook %s: cannot encode its input: %v; no hook ran", ev, err))
		v.failed = append(v.failed, err.Error())
		return v
	}
	if r.opt.Scrub != nil {
		data = []byte(r.opt.Scrub(string(data)))
	}
	env := r.env()
	for _, h := range hooks {
		v.ran = true
		var res ran
		if h.call != nil {
			res = runCallback(ctx, h, data)
		} else {
			res = runCommand(ctx, h, r.opt.Cwd, env, data, r.opt.Start)
		}
		if ctx.Err() != nil {
			return v // stopping: no verdict of a hook cut short
		}
		r.read(ev, h, res, &v)
	}
	return v
}

// read adds what one hook said to v; what the user must know is one line.
func (r *Runner) read(ev Event, h Hook, res ran, v *verdict) {
	fail := func(why string) {
		v.failed = append(v.failed, fmt.Sprintf("%q %s", h.Command, why))
		r.report(fmt.Sprintf("hook %s %q (%s) %s", ev, h.Command, h.Source, why))
	}
	switch {
	case res.err != nil:
		fail(res.err.Error())
	case res.truncated:
		fail(fmt.Sprintf("printed more than %d KiB; its output was ignored", MaxOutput>>10))
	case res.code == 2:
		msg := strings.TrimSpace(string(res.stderr))
		if blocksOn(ev) {
			v.block = true
			v.reason = append(v.reason, msg)
			return
		}
		r.report(fmt.Sprintf("hook %s %q: %s", ev, h.Command, firstLine(msg, "exited 2")))
	case res.code != 0:
		why := fmt.Sprintf("exited %d", res.code)
		if res.code == 127 {
			why = "was not found (exit 127)"
		}
		fail(why + ": " + firstLine(string(res.stderr), "no message") + "; not blocking")
	default:
		r.readOutput(ev, h, res.stdout, v, fail)
	}
}

// readOutput reads the stdout of a hook that exited 0.
func (r *Runner) readOutput(ev Event, h Hook, stdout []byte, v *verdict, fail func(string)) {
	out, isJSON, err := ParseOutput(stdout)
	switch {
	case err != nil:
		fail(err.Error() + "; it was ignored")
		return
	case !isJSON:
		if text := strings.TrimSpace(string(stdout)); text != "" && (ev == UserPromptSubmit || ev == SessionStart) {
			v.context = append(v.context, capText(text))
		}
		return
	}
	if out.Continue != nil && !*out.Continue {
		v.stop = true
		v.stopReason = out.StopReason
	}
	if out.SystemMessage != "" {
		r.report(fmt.Sprintf("hook %s: %s", ev, out.SystemMessage))
	}
	if out.Decision == "block" && ev != PreToolUse {
		v.block = true
		v.reason = append(v.reason, out.Reason)
	}
	if ev == PreToolUse {
		if d, reason := out.permission(); rank(d) > rank(v.decision) {
			v.decision, v.decisionReason = d, reason
		}
	}
	if s := out.Specific; s != nil {
		if len(s.UpdatedInput) > 0 {
			v.updated = s.UpdatedInput
		}
		if s.AdditionalContext != "" {
			v.context = append(v.context, capText(s.AdditionalContext))
		}
		if s.Decision != nil && ev == PermissionRequest {
			v.permission = s.Decision
		}
	}
}

// blocksOn are the events whose exit 2 blocks and whose stderr reaches
// the model (or, for a prompt, the user); elsewhere it is shown only.
func blocksOn(ev Event) bool {
	switch ev {
	case PreToolUse, PermissionRequest, UserPromptSubmit, Stop, SubagentStop, PostToolUse, PostToolUseFailure:
		return true
	}
	return false
}

func rank(decision string) int {
	switch decision {
	case "allow":
		return 1
	case "ask":
		return 2
	case "deny":
		return 3
	}
	return 0
}

func firstLine(s, empty string) string {
	s = oneLine(s)
	if s == "" {
		return empty
	}
	if len(s) > 200 {
		s = strings.ToValidUTF8(s[:200], "") + "…"
	}
	return s
}

// capText keeps what the model gets of one hook's text bounded.
func capText(s string) string {
	if len(s) <= maxContext {
		return s
	}
	cut := maxContext
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("\n[… %d more bytes of hook output dropped]", len(s)-cut)
}
