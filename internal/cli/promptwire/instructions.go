// Package promptwire is what goes into the prompt besides the user's
// words: the system message (instruction files such as CLAUDE.md, and
// the skills), the instruction files of a subdirectory the first time a
// call works there, and the images a prompt names. It reads the working
// directory; the runner decides when and keeps what it returns.
package promptwire

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/tiny-agent/tiny-go/internal/cli/cmdutil"
	"github.com/tiny-agent/tiny-go/internal/prompt"
)

// SystemPrompt assembles the system message of cwd for the offered tools:
// base instructions, the instruction files (CLAUDE.md, AGENTS.md, ...)
// and the skill index; it returns the skills and instruction files too.
func SystemPrompt(cwd, home string, toolNames, skillFiles []string) (string, []prompt.Skill, *prompt.Instructions, error) {
	ins, err := prompt.ReadInstructions(cwd, home)
	if err != nil {
		return "", nil, nil, err
	}
	skills, skipped, err := prompt.DiscoverSkillsFrom(cwd, home, skillFiles)
	if err != nil {
		return "", nil, nil, err
	}
	ins.Problems = append(ins.Problems, skipped...)
	return prompt.System(prompt.Options{Cwd: cwd, Tools: toolNames, Instructions: ins.Files, Skills: skills}), skills, ins, nil
}

// ReportProblems says on w which instruction files or imports, and which
// skills, were skipped.
func ReportProblems(w io.Writer, ins *prompt.Instructions) {
	for _, p := range ins.Problems {
		fmt.Fprintf(w, "%s: %s\n", cmdutil.ProgramName, p)
	}
}

// InstructionsLine is /status's list of instruction files with sizes.
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

// InstructionFile is one instruction file in `tiny-go config --json`.
type InstructionFile struct {
	Path  string `json:"path"`
	Bytes int    `json:"bytes"`
}

// InstructionFiles are ins's files for `tiny-go config --json`.
func InstructionFiles(ins *prompt.Instructions) []InstructionFile {
	out := []InstructionFile{}
	if ins != nil {
		for _, f := range ins.Files {
			out = append(out, InstructionFile{f.Path, len(f.Content)})
		}
	}
	return out
}

// PrintInstructions is the instructions part of `tiny-go config`.
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
