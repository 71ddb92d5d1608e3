package assemble

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/tiny-agent/tiny-go/internal/cli/cmdutil"
	"github.com/tiny-agent/tiny-go/internal/commands"
	"github.com/tiny-agent/tiny-go/internal/prompt"
)

// noteInstructions keeps the instruction files for /status and says
// which imports were skipped.
func (a *Runner) noteInstructions(ins *prompt.Instructions) {
	a.Instructions = ins
	for _, p := range ins.Problems {
		fmt.Fprintf(a.IO.Stderr, "%s: %s\n", cmdutil.ProgramName, p)
	}
}

// instructionsLine is /status's list of instruction files with sizes.
func InstructionsLine(ins *prompt.Instructions) string {
	if ins == nil || len(ins.Files) == 0 {
		return "(none: CLAUDE.md, AGENTS.md, CLAUDE.local.md, .claude/rules/*.md, ~/.claude/CLAUDE.md)"
	}
	parts := make([]string, len(ins.Files))
	for i, f := range ins.Files {
		parts[i] = fmt.Sprintf("%s (%d bytes)", f.Path, len(f.Content))
	}
	return strings.Join(parts, ", ")
}

// instructionFile is one instruction file in `tiny-go config --json`.
type InstructionFile struct {
	Path  string `json:"path"`
	Bytes int    `json:"bytes"`
}

func InstructionFiles(ins *prompt.Instructions) []InstructionFile {
	out := []InstructionFile{}
	if ins != nil {
		for _, f := range ins.Files {
			out = append(out, InstructionFile{f.Path, len(f.Content)})
		}
	}
	return out
}

// printInstructions is the instructions part of `tiny-go config`.
func PrintInstructions(w io.Writer, ins *prompt.Instructions, err error) error {
	fmt.Fprintln(w)
	switch {
	case err != nil:
		fmt.Fprintf(w, "instructions: cannot be read: %v\n", err)
		return nil
	case len(ins.Files) == 0:
		fmt.Fprintln(w, "instructions: none (CLAUDE.md, AGENTS.md, CLAUDE.local.md from the repository root down, .claude/rules/*.md, ~/.claude/CLAUDE.md)")
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "INSTRUCTIONS\tBYTES")
	for _, f := range ins.Files {
		fmt.Fprintf(tw, "%s\t%d\n", f.Path, len(f.Content))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, p := range ins.Problems {
		fmt.Fprintf(w, "instructions problem: %s\n", p)
	}
	return nil
}

// skillShorthand turns "/name text", for a skill's name that is no
// built-in command, into "/skill:name text", as Claude Code runs a skill
// by its name.
func skillShorthand(text string, skills []prompt.Skill) string {
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

// skillCommands are the skills as slash commands (/name), for the menu
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
