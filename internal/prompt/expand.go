package prompt

import (
	"errors"
	"fmt"
	"strings"
)

// SkillCommandPrefix starts a skill invocation: "/skill:<name> [text]".
const SkillCommandPrefix = "/skill:"

// ExpandSkill turns "/skill:<name> [text]" into the user message to send:
// the skill file's text, then "\n\nUser: <text>". Without text the message
// is the file text alone. ok is false (and err nil) when input is not a
// skill command. An unknown name gives the error "Unknown skill: <name>".
//
// The name ends at the first space, tab or newline; the text is the rest,
// trimmed. The file is read here, by the host, so a skill works even when
// the read tool is not offered.
func ExpandSkill(input string, skills []Skill) (message string, ok bool, err error) {
	rest, isSkill := strings.CutPrefix(input, SkillCommandPrefix)
	if !isSkill {
		return "", false, nil
	}
	name, text := rest, ""
	if i := strings.IndexAny(rest, " \t\r\n"); i >= 0 {
		name, text = rest[:i], strings.TrimSpace(rest[i:])
	}
	if name == "" {
		return "", true, errors.New("usage: /skill:<name> [text]")
	}
	for _, s := range skills {
		if s.Name != name {
			continue
		}
		body, err := readBounded(s.Path, MaxSkillFileBytes)
		if err != nil {
			return "", true, fmt.Errorf("skill %s: %w", name, err)
		}
		if text == "" {
			return body, true, nil
		}
		return body + "\n\nUser: " + text, true, nil
	}
	return "", true, &UnknownSkillError{Name: name}
}

// UnknownSkillError is returned by ExpandSkill for a name not in the index.
type UnknownSkillError struct{ Name string }

func (e *UnknownSkillError) Error() string { return "Unknown skill: " + e.Name }
