package ui

import (
	"strings"
)

// commandKind is what one submitted input asks for.
type commandKind int

const (
	cmdNone    commandKind = iota // blank input
	cmdPrompt                     // a prompt for the model
	cmdExit                       // /exit
	cmdCompact                    // /compact
	cmdSkill                      // /skill:name [text]
	cmdInvalid                    // a command that cannot run; text says why
	cmdRewind                     // /rewind [args]; text holds the args (rewind.go)
)

// command is a parsed input.
type command struct {
	kind commandKind
	// text is the prompt (cmdPrompt), the whole skill input (cmdSkill) or
	// the message to show (cmdInvalid).
	text string
}

// parseCommand reads one submitted input. A leading word like "/name" is
// a command; a path such as "/usr/bin/env is missing" is a prompt.
func parseCommand(input string) command {
	t := strings.TrimSpace(input)
	if t == "" {
		return command{kind: cmdNone}
	}
	word, rest := t, ""
	if i := strings.IndexAny(t, " \t\r\n"); i >= 0 {
		word, rest = t[:i], strings.TrimSpace(t[i:])
	}
	if !strings.HasPrefix(word, "/") || strings.Count(word, "/") > 1 || word == "/" {
		return command{kind: cmdPrompt, text: t}
	}
	switch {
	case word == "/exit" || word == "/compact":
		if rest != "" {
			return command{kind: cmdInvalid, text: word + " takes no arguments."}
		}
		if word == "/exit" {
			return command{kind: cmdExit}
		}
		return command{kind: cmdCompact}
	case word == "/rewind":
		return command{kind: cmdRewind, text: rest}
	case strings.HasPrefix(word, "/skill:") && len(word) > len("/skill:"):
		return command{kind: cmdSkill, text: t}
	case word == "/skill" || word == "/skill:":
		return command{kind: cmdInvalid, text: "Usage: /skill:name [text]"}
	}
	return command{kind: cmdInvalid, text: "Unknown command: " + truncate(sanitizeLine(word), 40) + ". Commands: " + helpCommands}
}
