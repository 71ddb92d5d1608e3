package ui

import (
	"strings"

	"github.com/tiny-agent/tiny-go/internal/commands"
)

// commandKind is what one submitted input asks for.
type commandKind int

const (
	cmdNone    commandKind = iota // blank input
	cmdPrompt                     // a prompt for the model
	cmdExit                       // /exit, /quit
	cmdCompact                    // /compact
	cmdSkill                      // /skill:name [text]
	cmdInvalid                    // a command that cannot run; text says why
	cmdRewind                     // /rewind [args]; text holds the args (rewind.go)
	cmdHelp                       // /help
	cmdClear                      // /clear
	cmdModel                      // /model [id]; text holds the id
	cmdStatus                     // /status
	cmdCost                       // /cost
	cmdResume                     // /resume [id]; text holds the id
	cmdCustom                     // a custom command; text is its expanded prompt
	cmdShell                      // !command; text is the command
	cmdDiag                       // /diagnostics [path]; text holds the path
	cmdInfo                       // /agents, /todos, /mcp, /hooks, /permissions; text is the name (info.go)
)

// command is a parsed input.
type command struct {
	kind commandKind
	// text is the prompt (cmdPrompt, cmdCustom), the whole skill input
	// (cmdSkill), the argument (cmdModel, cmdResume, cmdRewind), the shell
	// command (cmdShell) or the message to show (cmdInvalid).
	text string
}

// noArgs are the built-ins that take no argument.
var noArgs = map[string]commandKind{
	"/exit": cmdExit, "/quit": cmdExit, "/compact": cmdCompact, "/help": cmdHelp,
	"/clear": cmdClear, "/status": cmdStatus, "/cost": cmdCost,
}

// parseCommand reads one submitted input. A leading word like "/name" is
// a command (a built-in or one of custom); a path such as "/usr/bin/env
// is missing" is a prompt. "!cmd" runs cmd in the shell.
func parseCommand(input string, custom []commands.Command) command {
	t := strings.TrimSpace(input)
	if t == "" {
		return command{kind: cmdNone}
	}
	if sh, ok := strings.CutPrefix(t, "!"); ok && strings.TrimSpace(sh) != "" {
		return command{kind: cmdShell, text: strings.TrimSpace(sh)}
	}
	word, rest := t, ""
	if i := strings.IndexAny(t, " \t\r\n"); i >= 0 {
		word, rest = t[:i], strings.TrimSpace(t[i:])
	}
	if !strings.HasPrefix(word, "/") || strings.Count(word, "/") > 1 || word == "/" {
		return command{kind: cmdPrompt, text: t}
	}
	if infoCommands[word[1:]] {
		if rest != "" {
			return command{kind: cmdInvalid, text: word + " takes no arguments."}
		}
		return command{kind: cmdInfo, text: word[1:]}
	}
	if kind, ok := noArgs[word]; ok {
		if rest != "" {
			return command{kind: cmdInvalid, text: word + " takes no arguments."}
		}
		return command{kind: kind}
	}
	switch {
	case word == "/rewind":
		return command{kind: cmdRewind, text: rest}
	case word == "/model":
		return command{kind: cmdModel, text: rest}
	case word == "/resume":
		return command{kind: cmdResume, text: rest}
	case word == "/diagnostics":
		return command{kind: cmdDiag, text: rest}
	case strings.HasPrefix(word, "/skill:") && len(word) > len("/skill:"):
		return command{kind: cmdSkill, text: t}
	case word == "/skill" || word == "/skill:":
		return command{kind: cmdInvalid, text: "Usage: /skill:name [text]"}
	}
	if c, ok := commands.Find(custom, word[1:]); ok {
		if c.Skill != "" {
			return command{kind: cmdSkill, text: strings.TrimSpace("/skill:" + c.Skill + " " + rest)}
		}
		return command{kind: cmdCustom, text: c.Expand(rest)}
	}
	return command{kind: cmdInvalid, text: "Unknown command: " + truncate(sanitizeLine(word), 40) + ". Commands: " + commandList(custom)}
}

// commandList names every command: the built-ins, then the custom ones.
func commandList(custom []commands.Command) string {
	var names []string
	for _, c := range append(append([]commands.Command(nil), commands.Builtins...), custom...) {
		n := "/" + c.Name
		if c.Name == "skill:" {
			n = "/skill:name"
		}
		names = append(names, n)
	}
	return strings.Join(names, " ")
}

// helpLines are /help: every command with its description, then the keys.
func helpLines(custom []commands.Command) []string {
	lines := []string{"Commands:"}
	row := func(c commands.Command) {
		name := "/" + c.Name
		if c.ArgHint != "" {
			if c.Name != "skill:" {
				name += " "
			}
			name += c.ArgHint
		}
		lines = append(lines, "  "+padRight(name, 22)+" "+sanitizeLine(c.Description))
	}
	for _, c := range commands.Builtins {
		row(c)
	}
	if len(custom) > 0 {
		lines = append(lines, "Custom commands:")
		for _, c := range custom {
			row(c)
		}
	}
	return append(append(lines,
		"Input:",
		"  "+padRight("!command", 22)+" run a shell command (sandboxed like the bash tool); the model sees it next turn",
		"  "+padRight("@path", 22)+" attach a file, directory listing or image (Tab completes)",
	), keyHelpLines()...)
}

func padRight(s string, n int) string {
	if len(s) >= n {
		return s
	}
	return s + strings.Repeat(" ", n-len(s))
}
