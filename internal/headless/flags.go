package headless

import (
	"errors"
	"fmt"
	"strings"
)

// Flags are Claude Code's print-mode flags as given on the command line.
type Flags struct {
	Output, Input, PromptTool, PermissionMode string
	Partial, SkipPermissions                  bool
	// AutoApproval is tiny-go's --approval auto: bypassPermissions.
	AutoApproval        bool
	MaxTurns            int
	Allowed, Disallowed []string
	// Prompt is the prompt argument (text input).
	Prompt string
}

// NewOptions validates the flags into a driver's options (without the
// streams). An error is a usage mistake, said in one line.
func NewOptions(f Flags, version string) (Options, error) {
	o := Options{Output: f.Output, PartialMessages: f.Partial, MaxTurns: f.MaxTurns, Version: version, Prompt: f.Prompt}
	if o.Output == "" {
		o.Output = FormatText
	}
	switch o.Output {
	case FormatText, FormatJSON, FormatStreamJSON:
	default:
		return o, fmt.Errorf("--output-format must be text, json or stream-json, not %q", o.Output)
	}
	switch f.Input {
	case "", "text":
	case "stream-json":
		o.StreamInput = true
	default:
		return o, fmt.Errorf("--input-format must be text or stream-json, not %q", f.Input)
	}
	switch f.PromptTool {
	case "":
	case "stdio":
		if !o.StreamInput {
			return o, errors.New("--permission-prompt-tool stdio needs --input-format stream-json (the answers come on stdin)")
		}
		o.PromptTool = true
	default:
		return o, fmt.Errorf("--permission-prompt-tool: tiny-go asks only over stdio (--permission-prompt-tool stdio), not through the MCP tool %q", f.PromptTool)
	}
	if f.MaxTurns < 0 {
		return o, errors.New("--max-turns must be at least 1")
	}
	if o.StreamInput && strings.TrimSpace(o.Prompt) != "" {
		return o, errors.New("with --input-format stream-json the prompts come on stdin, not as arguments")
	}
	mode, err := f.mode()
	o.Mode = mode
	o.Rules = Rules{Allow: SplitRules(f.Allowed), Deny: SplitRules(f.Disallowed)}
	return o, err
}

// mode is --permission-mode, else bypassPermissions when
// --dangerously-skip-permissions or --approval auto asks for it.
func (f Flags) mode() (Mode, error) {
	switch {
	case f.PermissionMode != "":
		m, err := ParseMode(f.PermissionMode)
		if err != nil {
			return "", fmt.Errorf("--permission-mode: %w", err)
		}
		return m, nil
	case f.SkipPermissions || f.AutoApproval:
		return ModeBypass, nil
	}
	return ModeDefault, nil
}
