package hooks

import (
	"bytes"
	"fmt"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Output is the JSON a hook may print on stdout when it exits 0, as
// Claude Code reads it. Unknown members are ignored.
type Output struct {
	// Continue false stops tiny-go after the hooks (StopReason is shown).
	Continue       *bool  `json:"continue"`
	StopReason     string `json:"stopReason"`
	SuppressOutput bool   `json:"suppressOutput"`
	SystemMessage  string `json:"systemMessage"`
	// Decision "block" with Reason: PostToolUse and Stop tell the model,
	// UserPromptSubmit refuses the prompt. PreToolUse's older "approve"
	// and "block" are read as allow and deny.
	Decision string    `json:"decision"`
	Reason   string    `json:"reason"`
	Specific *Specific `json:"hookSpecificOutput"`
}

// Specific is hookSpecificOutput.
type Specific struct {
	HookEventName            string         `json:"hookEventName"`
	PermissionDecision       string         `json:"permissionDecision"`
	PermissionDecisionReason string         `json:"permissionDecisionReason"`
	UpdatedInput             jsontext.Value `json:"updatedInput"`
	AdditionalContext        string         `json:"additionalContext"`
	// Decision is PermissionRequest's answer.
	Decision *PermissionAnswer `json:"decision"`
}

// PermissionAnswer is a PermissionRequest hook's decision.
type PermissionAnswer struct {
	Behavior     string         `json:"behavior"` // allow or deny
	UpdatedInput jsontext.Value `json:"updatedInput"`
	Message      string         `json:"message"`
	Interrupt    bool           `json:"interrupt"`
}

// ParseOutput reads a hook's stdout. isJSON is false for plain text
// (which is context for UserPromptSubmit and SessionStart); err is set
// when the output looks like JSON (starts with "{") but is not a valid
// hook output, and then nothing of it is used.
func ParseOutput(stdout []byte) (out Output, isJSON bool, err error) {
	trimmed := bytes.TrimSpace(stdout)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return Output{}, false, nil
	}
	if err := json.Unmarshal(trimmed, &out, json.RejectUnknownMembers(false)); err != nil {
		return Output{}, true, fmt.Errorf("invalid JSON output: %s", oneLine(err.Error()))
	}
	if err := out.check(); err != nil {
		return Output{}, true, err
	}
	return out, true, nil
}

// check refuses values Claude Code would not accept, so a typo does not
// silently allow what the hook meant to deny.
func (o *Output) check() error {
	switch o.Decision {
	case "", "block", "approve":
	default:
		return fmt.Errorf("invalid JSON output: decision %q is not \"block\"", o.Decision)
	}
	s := o.Specific
	if s == nil {
		return nil
	}
	switch s.PermissionDecision {
	case "", "allow", "deny", "ask":
	default:
		return fmt.Errorf("invalid JSON output: permissionDecision %q is not allow, deny or ask", s.PermissionDecision)
	}
	if len(s.UpdatedInput) > 0 && s.UpdatedInput.Kind() != '{' {
		return fmt.Errorf("invalid JSON output: updatedInput is not an object")
	}
	if d := s.Decision; d != nil && d.Behavior != "allow" && d.Behavior != "deny" {
		return fmt.Errorf("invalid JSON output: decision.behavior %q is not allow or deny", d.Behavior)
	}
	return nil
}

// permission is the PreToolUse decision the output makes, "" for none.
func (o *Output) permission() (decision, reason string) {
	if s := o.Specific; s != nil && s.PermissionDecision != "" {
		return s.PermissionDecision, s.PermissionDecisionReason
	}
	switch o.Decision {
	case "approve":
		return "allow", o.Reason
	case "block":
		return "deny", o.Reason
	}
	return "", ""
}
