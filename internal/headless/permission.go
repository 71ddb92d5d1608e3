package headless

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/tiny-agent/tiny-go/internal/cctools"
	"github.com/tiny-agent/tiny-go/internal/permissions"
)

// Mode is Claude Code's permission mode.
type Mode string

// The permission modes tiny-go takes.
const (
	ModeDefault     Mode = "default"
	ModeAcceptEdits Mode = "acceptEdits"
	ModeBypass      Mode = "bypassPermissions"
	ModePlan        Mode = "plan"
	ModeDontAsk     Mode = "dontAsk"
	ModeAuto        Mode = "auto"
)

// ParseMode validates a permission mode. manual is Claude Code's other
// name of default (its CLI's label for it).
func ParseMode(s string) (Mode, error) {
	if s == "manual" {
		return ModeDefault, nil
	}
	switch m := Mode(s); m {
	case ModeDefault, ModeAcceptEdits, ModeBypass, ModePlan, ModeDontAsk, ModeAuto:
		return m, nil
	}
	return "", fmt.Errorf("permission mode must be default, acceptEdits, bypassPermissions, plan, dontAsk or auto, not %q", s)
}

// Rules are --allowedTools and --disallowedTools in Claude Code's syntax:
// "Bash", "Bash(npm test)", "Bash(git diff:*)", "Edit", "mcp__srv__tool".
type Rules struct {
	Allow, Deny []string
}

// SplitRules splits the flag values the way Claude Code does: by commas
// and spaces outside parentheses.
func SplitRules(values []string) []string {
	var out []string
	for _, v := range values {
		depth, start := 0, 0
		for i, r := range v + "," {
			switch {
			case r == '(':
				depth++
			case r == ')' && depth > 0:
				depth--
			case (r == ',' || r == ' ') && depth == 0:
				if s := strings.TrimSpace(v[start:i]); s != "" {
					out = append(out, s)
				}
				start = i + 1
			}
		}
	}
	return out
}

// matches reports whether a rule covers a call (in Claude Code's terms).
func matches(rule string, c cctools.Call) bool {
	name, content, hasContent := strings.Cut(rule, "(")
	if name != c.Name {
		return false
	}
	if !hasContent {
		return true
	}
	content = strings.TrimSuffix(content, ")")
	if c.Name == cctools.WebFetch {
		var in struct {
			URL string `json:"url"`
		}
		return json.Unmarshal(c.Input, &in) == nil && permissions.MatchesFetch(content, in.URL)
	}
	if c.Name != cctools.Bash {
		return false // path patterns are not matched: such a rule never allows
	}
	var in struct {
		Command string `json:"command"`
	}
	if json.Unmarshal(c.Input, &in) != nil {
		return false
	}
	if prefix, ok := strings.CutSuffix(content, ":*"); ok {
		return in.Command == prefix || strings.HasPrefix(in.Command, prefix+" ")
	}
	return in.Command == content
}

func anyMatch(rules []string, c cctools.Call) bool {
	for _, r := range rules {
		if matches(r, c) {
			return true
		}
	}
	return false
}

// decision is what the policy says of a call the approval gate asks about.
type decision int

const (
	allow decision = iota + 1
	deny
	askSDK
)

// decide applies the mode and the rules to a call; edits is whether the
// call only changes files inside the working directory
// (approval.EditsInside, the edits mode's one check); deny comes with
// the message the model sees. auto is
// Claude Code's classifier mode: tiny-go has no classifier, so, as
// Claude Code does when its classifier cannot answer, the call goes to
// the SDK (can_use_tool) or is denied, as in default.
func decide(mode Mode, rules Rules, promptTool bool, c cctools.Call, edits bool) (decision, string) {
	switch {
	case anyMatch(rules.Deny, c):
		return deny, fmt.Sprintf("Permission to use %s was denied by --disallowedTools.", c.Name)
	case mode == ModeBypass:
		return allow, ""
	case anyMatch(rules.Allow, c):
		return allow, ""
	case mode == ModeAcceptEdits && edits:
		return allow, ""
	case mode == ModePlan:
		return deny, "Plan mode is on: nothing may be changed or run yet. Present the plan instead."
	case mode == ModeDontAsk:
		return deny, fmt.Sprintf("Permission to use %s was not granted (dontAsk mode runs only the tools --allowedTools allows).", c.Name)
	case promptTool:
		return askSDK, ""
	}
	return deny, fmt.Sprintf("Permission to use %s was not granted: allow it with --allowedTools, or run with --permission-mode bypassPermissions or --permission-prompt-tool stdio.", c.Name)
}
