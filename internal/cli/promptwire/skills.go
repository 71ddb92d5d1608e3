package promptwire

import (
	"strings"

	"github.com/tiny-agent/tiny-go/internal/cli/cmdutil"
	"github.com/tiny-agent/tiny-go/internal/commands"
	"github.com/tiny-agent/tiny-go/internal/prompt"
)

// SkillShorthand turns "/name text", for a skill's name that is no
// built-in command, into "/skill:name text", as Claude Code runs a skill
// by its name.
func SkillShorthand(text string, skills []prompt.Skill) string {
	word, rest, _ := strings.Cut(text, " ")
	name, ok := strings.CutPrefix(word, "/")
	if !ok || name == "" || commands.IsBuiltin(name) {
		return text
	}
	for _, s := range skills {
		if s.Name == name {
			return strings.TrimSpace(prompt.SkillCommandPrefix + name + " " + rest)
		}
	}
	return text
}

// SkillCommands are the skills as slash commands (/name), for the menu
// and for typing them; a custom command or built-in of the same name
// wins.
func SkillCommands(skills []prompt.Skill, custom []commands.Command) []commands.Command {
	for _, s := range skills {
		if _, taken := commands.Find(custom, s.Name); taken || commands.IsBuiltin(s.Name) || strings.ContainsAny(s.Name, " /") {
			continue
		}
		custom = append(custom, commands.Command{Name: s.Name, Description: cmdutil.OneLine(s.Description), ArgHint: "[text]", Skill: s.Name, Path: s.Path})
	}
	return custom
}
