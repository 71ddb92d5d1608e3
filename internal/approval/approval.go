// Package approval decides, in `--approval ask` mode, whether a tool call
// may run: it shows the user what the call will do (the command, a diff of
// the file, the MCP tool and its arguments), asks, and remembers the "allow
// for the rest of the session" answers. It is the agent's Approve hook;
// how the question is put (terminal UI, line prompt) is the caller's.
package approval

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/store"
)

// Mode is the --approval setting.
type Mode string

const (
	// Ask shows every call that changes something and waits for the user.
	Ask Mode = "ask"
	// Edits is Ask, except that file edits and file commands (mkdir,
	// touch, mv, cp, rm) inside the working directory run at once: Claude
	// Code's acceptEdits (EditsInside).
	Edits Mode = "edits"
	// Auto runs every call at once.
	Auto Mode = "auto"
	// Plan lets the model look but not touch (Claude Code's name, which
	// hooks see as permission_mode): read, and bash with the tree
	// read-only; every other call is refused (planmode).
	Plan Mode = "plan"
	// Review is Ask, except that a command runs first, against a private
	// view of the tree, and its changes are shown and applied only when
	// accepted (review.go).
	Review Mode = "review"
)

// ModeInfo is one mode with its one-line description for users.
type ModeInfo struct {
	Mode        Mode
	Description string
}

// Modes is every mode, in the order help and docs list them: the one
// source of --help, acp --help and the consistency test of the docs.
var Modes = []ModeInfo{
	{Ask, "ask before bash, bg, write, edit and MCP calls run"},
	{Edits, "ask, except for edits and mkdir/touch/mv/cp/rm/sed inside the working directory"},
	{Auto, "run every call at once"},
	{Plan, "look but not touch (read, and bash with the tree read-only)"},
	{Review, "ask, but run bash sealed (network off, nothing outside the project writable) against a private view of the tree and show its changes before they land; a command that needs the network or the system is asked about first"},
}

// ModeNames are the modes' names, in Modes' order.
func ModeNames() []string {
	names := make([]string, len(Modes))
	for i, m := range Modes {
		names[i] = string(m.Mode)
	}
	return names
}

// ModeHelp describes every mode in one line, for a flag's help.
func ModeHelp() string {
	parts := make([]string, len(Modes))
	for i, m := range Modes {
		parts[i] = string(m.Mode) + ": " + m.Description
	}
	return strings.Join(parts, "; ")
}

// ModeChoice names the modes as "a, b or c".
func ModeChoice() string {
	n := ModeNames()
	return strings.Join(n[:len(n)-1], ", ") + " or " + n[len(n)-1]
}

// ParseMode validates a --approval value.
func ParseMode(s string) (Mode, error) {
	m := Mode(strings.TrimSpace(s))
	for _, k := range Modes {
		if k.Mode == m {
			return m, nil
		}
	}
	return "", fmt.Errorf("--approval must be %s, not %q", ModeChoice(), s)
}

// Choice is the user's answer to one prompt.
type Choice int

const (
	// Once allows this call (y).
	Once Choice = iota + 1
	// Always allows this call and, for the rest of the session, the calls
	// the prompt's Always describes (a).
	Always
	// Deny refuses the call (n); the optional reason goes to the model.
	Deny
)

// Answer is what the user chose.
type Answer struct {
	Choice Choice
	Reason string // for Deny
}

// Prompt is what the user is shown about one call. Texts are raw (as the
// model wrote them): whoever displays them must neutralize control
// characters.
type Prompt struct {
	Tool   string   // display name: "bash", "mcp:files/delete"
	Action string   // one line: "Run a command", "Edit notes.txt", ...
	Detail []string // the command, a unified diff, the arguments
	// Always is what "a" would allow from now on, e.g. "`go` commands";
	// empty when "a" is not offered (it then counts as "y").
	Always string
	// Recovery is set when an earlier process asked and died waiting.
	Recovery bool
	// Asker is who asks when it is not the session's own agent: "explore
	// subagent" (WithAsker).
	Asker string
}

// AskFunc puts a prompt to the user and waits for the answer. It returns
// ctx's error when ctx ends first (the operation was aborted: the user
// pressed Esc or Ctrl+C).
type AskFunc func(ctx context.Context, p Prompt) (Answer, error)

// maxDetailLines bounds a prompt's detail; the rest is summarized.
const maxDetailLines = 400

// Gate is the Approve hook of one session: it asks about each call that
// no earlier "always" answer covers.
type Gate struct {
	workDir string
	ask     AskFunc

	// journal, when set, keeps the rules beside the session (see
	// RulesFile); the file is made on the first "a".
	journal *store.Journal
	// purpose seals the journal's lines; refused says which were refused.
	purpose, refused string

	// reviewed, when set and true, lets built-in bash calls run without
	// asking: their changes are reviewed after (--approval review).
	reviewed func() bool
	// editing, when set and true, lets the calls EditsInside allows run
	// without asking (edits mode).
	editing func() bool

	// keepAlso, when set, is also told each "always" answer's rule keys
	// (split at NUL), after they are kept beside the session: Claude
	// Code's settings.local.json keeps those it would keep (KeepAlso).
	keepAlso func(keys [][]string)

	mu    sync.Mutex
	rules map[string]bool // what "a" allowed for the session (see call.rules)
}

// KeepAlso has f told the rule keys of each "always" answer from now on.
func (g *Gate) KeepAlso(f func(keys [][]string)) { g.keepAlso = f }

// NewGate returns a Gate for a session in workDir that asks with ask; its
// rules last as long as it does (NewSessionGate keeps them beside the
// session).
func NewGate(workDir string, ask AskFunc) *Gate {
	return &Gate{workDir: workDir, ask: ask, rules: map[string]bool{}}
}

// Approve implements agent.ApproveFunc.
func (g *Gate) Approve(ctx context.Context, req agent.ApprovalRequest) (agent.Approval, error) {
	c := classify(req, g.workDir)
	if !req.Asked && (c.harmless || g.allowed(c.rules) || g.reviewsAfter(req) || g.acceptsEdit(req)) {
		return agent.Approval{Allow: true}, nil
	}
	if c.harmless {
		// A read a hook or rule asked about: say what it reads.
		c.prompt = Prompt{Tool: req.Display, Action: "Run " + req.Display, Detail: limitLines(argumentLines(req.Arguments))}
	}
	c.prompt.Recovery = req.Recovery
	c.prompt.Asker = askerOf(ctx)
	ans, err := g.ask(ctx, c.prompt)
	if err != nil {
		return agent.Approval{}, err
	}
	switch ans.Choice {
	case Once:
		return agent.Approval{Allow: true}, nil
	case Always:
		// The rule is durable before the call is: the agent commits
		// toolStarted only after this returns.
		if err := g.remember(c); err != nil {
			return agent.Approval{}, err
		}
		return agent.Approval{Allow: true}, nil
	case Deny:
		return agent.Approval{Reason: ans.Reason}, nil
	}
	return agent.Approval{}, fmt.Errorf("unknown answer %d", ans.Choice)
}

// allowed reports whether earlier "always" answers cover every rule of a
// call; a call without rules is never covered.
func (g *Gate) allowed(rules []string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, r := range rules {
		if !g.rules[r] {
			return false
		}
	}
	return len(rules) > 0
}

func (g *Gate) remember(c call) error {
	if c.prompt.Always == "" || len(c.rules) == 0 {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.persist(c.rules); err != nil {
		return err
	}
	for _, r := range c.rules {
		g.rules[r] = true
	}
	if g.keepAlso != nil {
		keys := make([][]string, len(c.rules))
		for i, r := range c.rules {
			keys[i] = strings.Split(r, "\x00")
		}
		g.keepAlso(keys)
	}
	return nil
}

// call is what the gate knows about one request.
type call struct {
	prompt   Prompt
	harmless bool // reads only: never asked
	// rules name what an "always" answer allows: the tool
	// ("tool\x00write"), a command word of a tool ("bash\x00cmd\x00go"),
	// an action of a tool ("bg\x00stop"). A call is covered when all of
	// its rules were allowed.
	rules []string
}

func toolRule(tool string) []string { return []string{tool + "\x00tool"} }

func quoteWords(ws []string) string {
	q := make([]string, len(ws))
	for i, w := range ws {
		q[i] = "`" + w + "`"
	}
	switch len(q) {
	case 1:
		return q[0]
	case 2:
		return q[0] + " and " + q[1]
	}
	return strings.Join(q[:len(q)-1], ", ") + " and " + q[len(q)-1]
}

// commandCall describes a shell command (bash, bg start): "always" allows
// commands whose every first word was allowed.
func commandCall(tool, action, command string) call {
	c := call{prompt: Prompt{Tool: tool, Action: action, Detail: limitLines(strings.Split(command, "\n"))}}
	if words, ok := CommandWords(command); ok && len(words) > 0 {
		for _, w := range words {
			c.rules = append(c.rules, tool+"\x00cmd\x00"+w)
		}
		c.prompt.Always = quoteWords(slices.Compact(slices.Sorted(slices.Values(words)))) + " commands"
	}
	return c
}

func limitLines(lines []string) []string {
	if len(lines) <= maxDetailLines {
		return lines
	}
	rest := len(lines) - maxDetailLines
	return append(lines[:maxDetailLines:maxDetailLines], fmt.Sprintf("… %d more lines", rest))
}
