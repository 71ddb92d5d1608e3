// Package agents is subagents: their definitions (built-in, and Markdown
// files with YAML front matter in .claude/agents, ~/.claude/agents and
// .tiny-agent/agents, as Claude Code writes them) and the task tool that
// hands a piece of work to one. How a child runs (its session, its
// tools, its display) is the Runner the host provides.
package agents

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/tiny-agent/tiny-go/internal/cctools"
)

// Definition is one agent.
type Definition struct {
	Name        string
	Description string
	// Tools are the tiny-go names of the tools the child is offered; nil
	// means every tool but task.
	Tools []string
	// ReadOnlyBash runs the child's bash with the tree read-only (explore,
	// and agents that list Claude Code's Grep, Glob or LS but not Bash).
	ReadOnlyBash bool
	// Model is the child's model; "" is the parent's.
	Model string
	// Prompt is the child's system prompt (the file's body).
	Prompt string
	// Path is the file it came from; "" for a built-in.
	Path string
}

// Built-ins, overridden by a file of the same name.
var builtins = []Definition{
	{
		Name:        "general",
		Description: "General-purpose agent for multi-step tasks: researching, searching code, making changes. Has every tool but task.",
		Prompt: "You are a subagent of tiny-go, a coding agent. Carry out the task you are given completely, " +
			"using the tools offered to you, then answer with a concise report of what you found or did: " +
			"your last message is all the parent agent sees.",
	},
	{
		Name:         "explore",
		Description:  "Fast read-only agent for exploring a codebase: finds files, searches code, reads and answers questions about it. Cannot change anything.",
		Tools:        []string{"read", "bash"},
		ReadOnlyBash: true,
		Prompt: "You are a read-only exploration subagent of tiny-go. Find and read what the task asks about, " +
			"using read and bash (ls, find, grep, git log; the tree is read-only), and answer with a concise, " +
			"specific report with file paths and line numbers: your last message is all the parent agent sees.",
	},
}

// Dirs are the directories agent files are read from, lowest precedence
// first: the user's Claude Code agents, the project's, then tiny-go's own.
func Dirs(cwd, home string) []string {
	var out []string
	if home != "" {
		out = append(out, filepath.Join(home, ".claude", "agents"))
	}
	return append(out, filepath.Join(cwd, ".claude", "agents"), filepath.Join(cwd, ".tiny-agent", "agents"))
}

// Load returns the built-ins and the agents of dirs, a later definition of
// a name replacing an earlier one, sorted by name; problems are one line
// per file that could not be used.
func Load(dirs ...string) (defs []Definition, problems []string) {
	byName := map[string]Definition{}
	for _, d := range builtins {
		byName[d.Name] = d
	}
	for _, dir := range dirs {
		files, _ := filepath.Glob(filepath.Join(dir, "*.md"))
		sort.Strings(files)
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err == nil {
				var d Definition
				if d, err = Parse(data); err == nil {
					d.Path = f
					byName[d.Name] = d
					continue
				}
			}
			problems = append(problems, fmt.Sprintf("agent %s not loaded: %v", f, err))
		}
	}
	for _, d := range byName {
		defs = append(defs, d)
	}
	slices.SortFunc(defs, func(a, b Definition) int { return strings.Compare(a.Name, b.Name) })
	return defs, problems
}

// front is the front matter of an agent file. tools is Claude Code's
// comma-separated string, or a YAML list.
type front struct {
	Name        string    `yaml:"name"`
	Description string    `yaml:"description"`
	Tools       yaml.Node `yaml:"tools"`
	Model       string    `yaml:"model"`
}

// Parse reads an agent file: YAML front matter between "---" lines with
// name and description (required), tools and model (optional), then the
// body, the child's system prompt.
func Parse(data []byte) (Definition, error) {
	if !utf8.Valid(data) || bytes.IndexByte(data, 0) >= 0 {
		return Definition{}, errors.New("not UTF-8 text")
	}
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	rest, ok := strings.CutPrefix(text, "---\n")
	if !ok {
		return Definition{}, errors.New("no front matter: the file must start with a --- line")
	}
	var head, body string
	if after, ok := strings.CutPrefix(rest, "---"); ok {
		body = after // empty front matter
	} else {
		end := strings.Index(rest, "\n---")
		if end < 0 {
			return Definition{}, errors.New("front matter starts with --- but never ends (no closing --- line)")
		}
		head, body = rest[:end], rest[end+len("\n---"):]
	}
	if nl := strings.IndexByte(body, '\n'); nl >= 0 && strings.TrimSpace(body[:nl]) == "" {
		body = body[nl+1:]
	} else if strings.TrimSpace(body) != "" {
		return Definition{}, errors.New("text after the closing --- of the front matter")
	}
	var f front
	if err := yaml.Unmarshal([]byte(head), &f); err != nil {
		// Claude Code's front matter parser is lenient: an unquoted ": "
		// inside a description is text. Quote such values and try again.
		if err2 := yaml.Unmarshal([]byte(quotePlainValues(head)), &f); err2 != nil {
			return Definition{}, fmt.Errorf("front matter: %w", err)
		}
	}
	return definition(f, body)
}

func definition(f front, body string) (Definition, error) {
	d := Definition{Name: strings.TrimSpace(f.Name), Description: strings.Join(strings.Fields(f.Description), " "), Prompt: strings.TrimSpace(body)}
	switch {
	case !validName(d.Name):
		return Definition{}, fmt.Errorf("name %q must be 1-64 characters, each a letter, a digit, '-', '_' or '.'", d.Name)
	case d.Description == "":
		return Definition{}, errors.New("description is required: it tells the model when to use the agent")
	case d.Prompt == "":
		return Definition{}, errors.New("the body (the agent's system prompt) is empty")
	}
	names, err := toolNames(f.Tools)
	if err != nil {
		return Definition{}, err
	}
	if names != nil {
		d.Tools, d.ReadOnlyBash = mapTools(names)
	}
	if m := strings.TrimSpace(f.Model); !inheritModel(m) {
		d.Model = m
	}
	return d, nil
}

// toolNames reads tools: a comma-separated string or a list of strings;
// nil when absent.
func toolNames(n yaml.Node) ([]string, error) {
	var names []string
	switch n.Kind {
	case 0:
		return nil, nil
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return nil, nil
		}
		for t := range strings.SplitSeq(n.Value, ",") {
			names = append(names, strings.TrimSpace(t))
		}
	case yaml.SequenceNode:
		names = []string{} // tools: [] is no tools, not every tool
		for _, c := range n.Content {
			if c.Kind != yaml.ScalarNode {
				return nil, errors.New("tools must be a comma-separated string or a list of names")
			}
			names = append(names, strings.TrimSpace(c.Value))
		}
	default:
		return nil, errors.New("tools must be a comma-separated string or a list of names")
	}
	return slices.DeleteFunc(names, func(s string) bool { return s == "" }), nil
}

// mapTools turns Claude Code's (or tiny-go's) tool names into tiny-go's.
// Grep, Glob and LS have no tool of their own in tiny-go: they become bash
// with the tree read-only, unless Bash itself is listed.
func mapTools(names []string) (tiny []string, readOnlyBash bool) {
	search, bash := false, false
	tiny = []string{}
	for _, n := range names {
		switch n {
		case "Grep", "Glob", "LS":
			search = true
			continue
		}
		t := cctools.TinyName(n)
		if t == "bash" {
			bash = true
		}
		if !slices.Contains(tiny, t) {
			tiny = append(tiny, t)
		}
	}
	if search && !bash {
		tiny = append(tiny, "bash")
		readOnlyBash = true
	}
	return tiny, readOnlyBash
}

// inheritModel: no model, or Claude Code's aliases, which name no model of
// tiny-go's endpoints: the child uses the parent's.
func inheritModel(m string) bool {
	switch strings.ToLower(m) {
	case "", "inherit", "sonnet", "opus", "haiku":
		return true
	}
	return false
}

func validName(name string) bool {
	if name == "" || len(name) > 64 {
		return false
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return false
		}
	}
	return true
}

// Find is the definition named name.
func Find(defs []Definition, name string) (Definition, bool) {
	for _, d := range defs {
		if d.Name == name {
			return d, true
		}
	}
	// Claude Code's name of its general agent, which a model used to
	// Claude Code sends, is tiny-go's general unless a file defines it.
	if name == claudeGeneral {
		return Find(defs, "general")
	}
	return Definition{}, false
}

// claudeGeneral is Claude Code's catch-all subagent type.
const claudeGeneral = "general-purpose"

// Offers reports whether d offers the tool named name to its child.
func (d Definition) Offers(name string) bool {
	if d.Tools == nil {
		return name != ToolName
	}
	return slices.Contains(d.Tools, name)
}

// MayDelegate reports whether d's child may be offered task when the depth
// limit allows it: an agent with every tool, or one that lists Task.
func (d Definition) MayDelegate() bool {
	return d.Tools == nil || slices.Contains(d.Tools, ToolName)
}
