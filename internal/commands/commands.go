// Package commands is what a slash command is, independent of any
// frontend: the built-in commands with their one-line descriptions, the
// custom commands read from Markdown files (project, user, and
// .claude/commands so existing projects work unchanged), and the expansion
// of a custom command's body with its arguments. The terminal UI shows and
// runs them; other frontends (ACP) can list and expand the same set.
package commands

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"
)

// Command is one slash command.
type Command struct {
	Name        string // without the leading slash
	Description string // one line
	ArgHint     string // e.g. "[id]"; shown after the name
	Builtin     bool
	// Body is a custom command's template ($ARGUMENTS, $1…$9).
	Body string
	// Path is the file a custom command was read from.
	Path string
	// Skill, when set, makes /Name run the skill of that name (as
	// /skill:name) instead of a template.
	Skill string
}

// Builtins are the commands every frontend knows, in menu order.
var Builtins = []Command{
	{Name: "help", Description: "commands and keys", Builtin: true},
	{Name: "clear", Description: "start a new session here (the old one stays resumable)", Builtin: true},
	{Name: "model", ArgHint: "[id]", Description: "show or switch the model for the rest of the session", Builtin: true},
	{Name: "status", Description: "model, endpoint, session, window share, sandbox, approval, MCP", Builtin: true},
	{Name: "cost", Description: "tokens and cost of this session", Builtin: true},
	{Name: "resume", ArgHint: "[id]", Description: "list this directory's sessions or switch to one", Builtin: true},
	{Name: "rewind", ArgHint: "[N]", Description: "go back to before a turn (files and/or conversation)", Builtin: true},
	{Name: "compact", Description: "summarize the conversation so far", Builtin: true},
	{Name: "diagnostics", ArgHint: "[path]", Description: "errors and warnings of the language servers, of a file or every open one", Builtin: true},
	{Name: "skill:", ArgHint: "name [text]", Description: "send a skill's instructions with your text", Builtin: true},
	{Name: "agents", Description: "the subagents the model can start, and this session's", Builtin: true},
	{Name: "todos", Description: "the model's todo list of this session", Builtin: true},
	{Name: "mcp", Description: "MCP servers: connected, their tools, and those left out", Builtin: true},
	{Name: "hooks", Description: "the hooks in effect and the files they come from", Builtin: true},
	{Name: "permissions", Description: "the approval mode, permission rules and this session's always-allow answers", Builtin: true},
	{Name: "exit", Description: "exit tiny-go", Builtin: true},
	{Name: "quit", Description: "exit tiny-go", Builtin: true},
}

// IsBuiltin reports whether name (without the slash) is a built-in.
func IsBuiltin(name string) bool {
	for _, b := range Builtins {
		if b.Name == name || (b.Name == "skill:" && strings.HasPrefix(name, "skill:")) {
			return true
		}
	}
	return name == "skill"
}

// Dirs are the directories custom commands are read from, highest
// precedence first: the project's .tiny-agent/commands, its
// .claude/commands, then the user's ~/.config/tiny-go/commands. home ""
// leaves the user directory out.
func Dirs(cwd, home string) []string {
	dirs := []string{filepath.Join(cwd, ".tiny-agent", "commands"), filepath.Join(cwd, ".claude", "commands")}
	if home != "" {
		dirs = append(dirs, filepath.Join(home, ".config", "tiny-go", "commands"))
	}
	return dirs
}

// MaxFileSize bounds a command file; a larger one is refused.
const MaxFileSize = 256 << 10

// Load reads the custom commands of dirs (missing directories are
// skipped). A file in an earlier directory hides one of the same name in a
// later one. Each file that cannot be used — it does not parse, its name
// is not a command name, or it would shadow a built-in — is left out and
// reported as one problem line naming the file; the others still load.
func Load(dirs ...string) (cmds []Command, problems []string) {
	seen := map[string]bool{}
	for _, dir := range dirs {
		entries, err := os.ReadDir(dir)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			problems = append(problems, fmt.Sprintf("commands: %v", err))
			continue
		}
		for _, e := range entries {
			if e.IsDir() || !strings.HasSuffix(e.Name(), ".md") {
				continue
			}
			path := filepath.Join(dir, e.Name())
			name := strings.TrimSuffix(e.Name(), ".md")
			if seen[name] {
				continue
			}
			c, err := ReadFile(path)
			if err != nil {
				problems = append(problems, err.Error())
				continue
			}
			seen[name] = true
			cmds = append(cmds, c)
		}
	}
	sort.Slice(cmds, func(i, j int) bool { return cmds[i].Name < cmds[j].Name })
	return cmds, problems
}

// ReadFile reads one command file; its name is the file name without .md.
func ReadFile(path string) (Command, error) {
	name := strings.TrimSuffix(filepath.Base(path), ".md")
	fail := func(format string, args ...any) (Command, error) {
		return Command{}, fmt.Errorf("command file %s: %s", path, fmt.Sprintf(format, args...))
	}
	if !validName(name) {
		return fail("%q is not a command name (letters, digits, - and _ only); rename the file", name)
	}
	if IsBuiltin(name) {
		return fail("/%s is a built-in command and cannot be replaced; rename the file", name)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return fail("%v", errors.Unwrap(err))
	}
	if !fi.Mode().IsRegular() {
		return fail("not a regular file")
	}
	if fi.Size() > MaxFileSize {
		return fail("%d bytes, more than the %d a command file may have", fi.Size(), MaxFileSize)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return fail("%v", errors.Unwrap(err))
	}
	c, err := Parse(name, data)
	if err != nil {
		return fail("%v", err)
	}
	c.Path = path
	return c, nil
}

func validName(name string) bool {
	if name == "" || len(name) > 64 {
		return false
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

// Parse reads a command file's content: optional front matter between
// "---" lines (description: and argument-hint: are used; other keys, such
// as Claude Code's allowed-tools, are accepted and ignored), then the
// body.
func Parse(name string, data []byte) (Command, error) {
	if !utf8.Valid(data) {
		return Command{}, errors.New("not UTF-8 text")
	}
	if strings.IndexByte(string(data), 0) >= 0 {
		return Command{}, errors.New("a binary file, not Markdown")
	}
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	c := Command{Name: name}
	if rest, ok := strings.CutPrefix(text, "---\n"); ok {
		var front, body string
		if after, ok := strings.CutPrefix(rest, "---"); ok {
			body = after // empty front matter
		} else {
			end := strings.Index(rest, "\n---")
			if end < 0 {
				return Command{}, errors.New("front matter starts with --- but never ends (no closing --- line)")
			}
			front, body = rest[:end], rest[end+len("\n---"):]
		}
		if nl := strings.IndexByte(body, '\n'); nl >= 0 {
			if strings.TrimSpace(body[:nl]) != "" {
				return Command{}, errors.New("text after the closing --- of the front matter")
			}
			body = body[nl+1:]
		} else if strings.TrimSpace(body) != "" {
			return Command{}, errors.New("text after the closing --- of the front matter")
		} else {
			body = ""
		}
		for i, line := range strings.Split(front, "\n") {
			t := strings.TrimSpace(line)
			if t == "" || strings.HasPrefix(t, "#") {
				continue
			}
			key, value, ok := strings.Cut(t, ":")
			if !ok || strings.TrimSpace(key) == "" {
				return Command{}, fmt.Errorf("front matter line %d: %q is not \"key: value\"", i+2, truncate(t, 40))
			}
			value = unquote(strings.TrimSpace(value))
			switch strings.TrimSpace(key) {
			case "description":
				c.Description = oneLine(value)
			case "argument-hint":
				c.ArgHint = oneLine(value)
			}
		}
		text = body
	}
	c.Body = strings.TrimSpace(text)
	if c.Body == "" {
		return Command{}, errors.New("the command has no text")
	}
	if c.Description == "" {
		c.Description = oneLine(firstLine(c.Body))
	}
	return c, nil
}

func unquote(s string) string {
	if len(s) >= 2 && (s[0] == '"' && s[len(s)-1] == '"' || s[0] == '\'' && s[len(s)-1] == '\'') {
		return s[1 : len(s)-1]
	}
	return s
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return strings.TrimLeft(line, "# ")
}

func oneLine(s string) string { return truncate(strings.Join(strings.Fields(s), " "), 80) }

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// Expand is the prompt a custom command sends for args: $ARGUMENTS is
// replaced with the whole argument text, $1…$9 with the words of it
// (quotes group words; a missing one is empty). A body that uses neither
// gets the arguments appended as a paragraph of their own.
func (c Command) Expand(args string) string {
	args = strings.TrimSpace(args)
	words := splitArgs(args)
	used := false
	var b strings.Builder
	body := c.Body
	for i := 0; i < len(body); i++ {
		if body[i] != '$' {
			b.WriteByte(body[i])
			continue
		}
		rest := body[i+1:]
		switch {
		case strings.HasPrefix(rest, "ARGUMENTS"):
			b.WriteString(args)
			i += len("ARGUMENTS")
			used = true
		case len(rest) > 0 && rest[0] >= '1' && rest[0] <= '9':
			if n := int(rest[0] - '1'); n < len(words) {
				b.WriteString(words[n])
			}
			i++
			used = true
		default:
			b.WriteByte('$')
		}
	}
	out := b.String()
	if !used && args != "" {
		out += "\n\n" + args
	}
	return out
}

// splitArgs splits args into words; "double" or 'single' quotes group.
func splitArgs(s string) []string {
	var words []string
	var cur strings.Builder
	in, quote := false, rune(0)
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote == 0 && (r == '"' || r == '\''):
			quote, in = r, true
		case quote == 0 && (r == ' ' || r == '\t' || r == '\n'):
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if in {
		words = append(words, cur.String())
	}
	return words
}

// Find is the command named name (without the slash) in cmds.
func Find(cmds []Command, name string) (Command, bool) {
	for _, c := range cmds {
		if c.Name == name {
			return c, true
		}
	}
	return Command{}, false
}

// Match are the commands whose name starts with prefix (without the
// slash), then those that contain it, each group in the given order.
func Match(cmds []Command, prefix string) []Command {
	var starts, contains []Command
	p := strings.ToLower(prefix)
	for _, c := range cmds {
		n := strings.ToLower(c.Name)
		switch {
		case strings.HasPrefix(n, p):
			starts = append(starts, c)
		case strings.Contains(n, p):
			contains = append(contains, c)
		}
	}
	return append(starts, contains...)
}
