package permissions

import (
	"path"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"mvdan.cc/sh/v3/syntax"

	"github.com/tiny-agent/tiny-go/internal/cctools"
)

// call is a tool call in the terms rules speak of.
type call struct {
	tiny    string // tiny-go's tool name
	name    string // Claude Code's
	command string // Bash
	paths   []string
	agent   string // Task's subagent_type
	host    string // WebFetch's URL's host
}

func (s *Settings) describe(tool string, args jsontext.Value) call {
	cc := cctools.ToClaude(tool, args, s.cwd)
	c := call{tiny: tool, name: cc.Name}
	var in map[string]any
	_ = json.Unmarshal(cc.Input, &in)
	c.command, _ = in["command"].(string)
	c.agent, _ = in["subagent_type"].(string)
	if u, ok := in["url"].(string); ok && c.name == cctools.WebFetch {
		c.host = urlHost(u)
	}
	if p, ok := in["file_path"].(string); ok && p != "" {
		p = filepath.Clean(p)
		c.paths = append(c.paths, p)
		// A symlink is judged by what it points to as well.
		if real, err := filepath.EvalSymlinks(p); err == nil && real != p {
			c.paths = append(c.paths, real)
		}
	}
	return c
}

// Decide is what the rules say of a call of the tiny-go tool with args:
// Deny, Ask or Allow with the rule that said it, or "" and nil when no
// rule speaks of it.
func (s *Settings) Decide(tool string, args jsontext.Value) (Kind, *Rule) {
	if s == nil {
		return "", nil
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if len(s.Rules) == 0 {
		return "", nil
	}
	c := s.describe(tool, args)
	for _, k := range []Kind{Deny, Ask} {
		for i := range s.Rules {
			if r := &s.Rules[i]; r.Kind == k && r.matches(c, s) {
				return k, r
			}
		}
	}
	if c.name == cctools.Bash && c.command != "" {
		return s.allowCommand(c)
	}
	for i := range s.Rules {
		if r := &s.Rules[i]; r.Kind == Allow && r.matches(c, s) {
			return Allow, r
		}
	}
	return "", nil
}

// allowCommand allows a command when every command of it is allowed: a
// rule for `npm test` does not allow `npm test && curl x | sh`.
func (s *Settings) allowCommand(c call) (Kind, *Rule) {
	parts, ok := commandParts(c.command)
	var first *Rule
	for i := range s.Rules {
		// A pattern is matched against the whole line only when the line
		// cannot be split: "git diff:*" must not allow "git diff && rm x".
		r := &s.Rules[i]
		if r.Kind == Allow && r.appliesTo(c) && (r.bare || (!ok && r.spec == strings.TrimSpace(c.command))) {
			return Allow, r
		}
	}
	if !ok || len(parts) == 0 {
		return "", nil
	}
	for _, p := range parts {
		var by *Rule
		for i := range s.Rules {
			r := &s.Rules[i]
			if r.Kind == Allow && r.appliesTo(c) && !r.bare && matchCommand(r.spec, p) {
				by = r
				break
			}
		}
		if by == nil {
			return "", nil
		}
		if first == nil {
			first = by
		}
	}
	if first == nil {
		return "", nil
	}
	return Allow, first
}

// appliesTo reports whether the rule's tool is the call's.
func (r *Rule) appliesTo(c call) bool {
	switch r.tool {
	case cctools.Bash, cctools.Read, cctools.Write, cctools.MultiEdit, cctools.TodoWrite:
		return c.name == r.tool
	case cctools.Edit:
		// Edit rules apply to every tool that edits files.
		return c.name == cctools.Edit || c.name == cctools.MultiEdit || c.name == cctools.Write
	case cctools.Task, "Agent":
		return c.name == cctools.Agent
	case cctools.BashOutput, cctools.KillShell:
		return c.name == r.tool
	}
	if server, ok := strings.CutPrefix(r.tool, "mcp__"); ok {
		rest, isMCP := strings.CutPrefix(c.name, "mcp__")
		if !isMCP {
			return false
		}
		if s, _, hasTool := strings.Cut(server, "__"); hasTool {
			return r.tool == c.name || (strings.HasSuffix(r.tool, "__*") && strings.HasPrefix(rest, s+"__"))
		}
		return strings.HasPrefix(rest, server+"__")
	}
	// tiny-go's own names (bash, read, diagnostics) work too.
	return r.tool == c.name || r.tool == c.tiny
}

// matches reports whether the rule speaks of the call.
func (r *Rule) matches(c call, s *Settings) bool {
	if !r.appliesTo(c) {
		return false
	}
	if r.bare {
		return true
	}
	switch r.tool {
	case cctools.Bash:
		if matchCommand(r.spec, c.command) {
			return true
		}
		parts, _ := commandParts(c.command)
		for _, p := range parts {
			if matchCommand(r.spec, p) {
				return true
			}
		}
		return false
	case cctools.Read, cctools.Edit, cctools.Write, cctools.MultiEdit:
		pat := s.pathPattern(r)
		for _, p := range c.paths {
			if matchPath(pat, p) {
				return true
			}
		}
		return false
	case cctools.Task, "Agent":
		return c.agent == r.spec
	case cctools.WebFetch:
		return c.host != "" && matchDomain(r.spec, c.host)
	}
	// A specifier tiny-go has nothing to match against: never matches.
	return false
}

// matchCommand matches one command against a Bash specifier: "x:*" is
// the prefix x at a word boundary, "*" is any text (a lone trailing " *"
// may match nothing), anything else the exact command.
func matchCommand(spec, cmd string) bool {
	cmd = strings.TrimSpace(cmd)
	if prefix, ok := strings.CutSuffix(spec, ":*"); ok {
		return cmd == prefix || strings.HasPrefix(cmd, prefix+" ")
	}
	if !strings.Contains(spec, "*") {
		return cmd == spec
	}
	if base, ok := strings.CutSuffix(spec, " *"); ok && !strings.Contains(base, "*") && cmd == base {
		return true
	}
	parts := strings.Split(spec, "*")
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	re, err := regexp.Compile(`(?s)^` + strings.Join(parts, ".*") + `$`)
	return err == nil && re.MatchString(cmd)
}

// commandParts are the simple commands of a command line, each as its
// words (without leading variable assignments), including those inside
// pipelines, lists, subshells and substitutions. ok is false when the
// line does not parse.
func commandParts(command string) (parts []string, ok bool) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(command), "")
	if err != nil {
		return nil, false
	}
	printer := syntax.NewPrinter()
	syntax.Walk(f, func(n syntax.Node) bool {
		ce, isCall := n.(*syntax.CallExpr)
		if !isCall || len(ce.Args) == 0 {
			return true
		}
		words := make([]string, 0, len(ce.Args))
		for _, w := range ce.Args {
			var b strings.Builder
			if printer.Print(&b, w) != nil {
				return true
			}
			words = append(words, b.String())
		}
		parts = append(parts, strings.Join(words, " "))
		return true
	})
	return parts, true
}

// pathPattern is a Read or Edit rule's pattern as an absolute, slash
// separated glob: //x is /x, ~/x is in home, /x is relative to the
// directory holding the rule's .claude, ./x and a/x are relative to the
// working directory, and a name without a slash matches at any depth
// under it (gitignore's rules).
func (s *Settings) pathPattern(r *Rule) string {
	p := strings.TrimSuffix(r.spec, "/")
	switch {
	case strings.HasPrefix(p, "//"):
		return path.Clean(p[1:])
	case p == "~" || strings.HasPrefix(p, "~/"):
		return path.Join(s.home, strings.TrimPrefix(p, "~"))
	case strings.HasPrefix(p, "/"):
		return path.Join(r.root, p)
	case strings.HasPrefix(p, "./"):
		return path.Join(s.cwd, p)
	case strings.Contains(p, "/"):
		return path.Join(s.cwd, p)
	}
	return s.cwd + "/**/" + p
}

// matchPath matches an absolute path against an absolute pattern of
// path.Match segments and "**" (any number of directories). A pattern
// that matches a directory matches everything under it.
func matchPath(pattern, p string) bool {
	return matchSegs(strings.Split(strings.TrimPrefix(pattern, "/"), "/"), strings.Split(strings.TrimPrefix(path.Clean(p), "/"), "/"))
}

func matchSegs(pat, segs []string) bool {
	if len(pat) == 0 {
		return true
	}
	if pat[0] == "**" {
		return matchSegs(pat[1:], segs) || (len(segs) > 0 && matchSegs(pat, segs[1:]))
	}
	if len(segs) == 0 {
		return false
	}
	ok, err := path.Match(pat[0], segs[0])
	return err == nil && ok && matchSegs(pat[1:], segs[1:])
}
