package cli

import (
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tiny-agent/tiny-go/internal/approval"
	"github.com/tiny-agent/tiny-go/internal/cli/assemble"
	"github.com/tiny-agent/tiny-go/internal/cli/cmdutil"
	"github.com/tiny-agent/tiny-go/internal/cli/headlesscmd"
	"github.com/tiny-agent/tiny-go/internal/headless"
)

// claudeArgs rewrites a command line of the root command the way Claude
// Code reads it: --resume and -r take the next word as their value when
// it is not a flag (--resume ID, -r ID), which pflag cannot do for a flag
// whose value is optional; they become --resume=ID. Everything else,
// and everything after --, is left as it is. Subcommands' command lines
// are not touched, nor are the flags of `run --temporal` (fleet.go),
// which are tiny-go-fleet's.
func claudeArgs(root *cobra.Command, args []string) []string {
	if cmd, _, err := root.Find(args); err != nil || cmd != root {
		return args
	}
	return resumeValues(root.Flags(), fleetRun(root.Flags(), args))
}

// fleetRun puts -- before `run --temporal ...`, so that its flags reach
// tiny-go-fleet as arguments rather than being parsed as tiny-go's.
func fleetRun(fl *pflag.FlagSet, args []string) []string {
	for i := 0; i < len(args); i++ {
		s := args[i]
		if s == "--" {
			return args
		}
		if _, takesNext := flagArity(fl, s); takesNext {
			i++
			continue
		}
		if strings.HasPrefix(s, "-") && s != "-" {
			continue
		}
		if s == "run" && i+1 < len(args) && (args[i+1] == "--temporal" || strings.HasPrefix(args[i+1], "--temporal=")) {
			return append(append(slices.Clip(args[:i]), "--"), args[i:]...)
		}
		return args
	}
	return args
}

// resumeValues is claudeArgs on the flags fl knows.
func resumeValues(fl *pflag.FlagSet, args []string) []string {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		s := args[i]
		out = append(out, s)
		if s == "--" {
			return append(out, args[i+1:]...)
		}
		resume, takesNext := flagArity(fl, s)
		switch {
		case resume && i+1 < len(args) && isValue(args[i+1]):
			// -pr ID is -p --resume=ID.
			out = out[:len(out)-1]
			if rest := strings.TrimSuffix(s, "r"); !strings.HasPrefix(s, "--") && rest != "-" {
				out = append(out, rest)
			}
			out = append(out, "--resume="+args[i+1])
			i++
		case takesNext && i+1 < len(args):
			out = append(out, args[i+1])
			i++
		}
	}
	return out
}

// isValue reports whether a word can be --resume's value: not a flag.
func isValue(s string) bool { return s != "" && !strings.HasPrefix(s, "-") }

// flagArity says of one word whether it ends in --resume without a value
// (--resume, -r, -pr) and whether the next word is the value of the flag
// it ends in (--model x, -m x).
func flagArity(fl *pflag.FlagSet, s string) (resume, takesNext bool) {
	needsValue := func(f *pflag.Flag) bool { return f != nil && f.NoOptDefVal == "" }
	switch {
	case len(s) < 2 || s[0] != '-' || strings.Contains(s, "="):
		return false, false
	case strings.HasPrefix(s, "--"):
		return s == "--resume", needsValue(fl.Lookup(s[2:]))
	}
	// A cluster of short flags: a flag that takes a value takes the rest of
	// the word, or the next word when it is last.
	for j := 1; j < len(s); j++ {
		f := fl.ShorthandLookup(s[j : j+1])
		if f == nil {
			return false, false
		}
		if needsValue(f) {
			return false, j == len(s)-1
		}
		if j == len(s)-1 {
			return f.Name == "resume", false
		}
	}
	return false, false
}

// permissionApproval maps Claude Code's --permission-mode and
// --dangerously-skip-permissions onto --approval outside print mode:
// default is ask, acceptEdits is edits, plan is plan and
// bypassPermissions (or the skip flag) is auto. An explicit
// --permission-mode wins over the skip flag, as in print mode; both win
// over a settings file's approval, and must agree with --approval.
func permissionApproval(f *assemble.Flags, h *headlesscmd.Flags, approvalGiven bool) error {
	mode := ""
	switch {
	case h.PermissionMode != "":
		m, err := headless.ParseMode(h.PermissionMode)
		if err != nil {
			return cmdutil.UsageErrorf("--permission-mode: %v", err)
		}
		switch m {
		case headless.ModeDefault:
			mode = string(approval.Ask)
		case headless.ModeAcceptEdits:
			mode = string(approval.Edits)
		case headless.ModePlan:
			mode = string(approval.Plan)
		case headless.ModeBypass:
			mode = string(approval.Auto)
		default:
			return cmdutil.UsageErrorf("--permission-mode %s is for print mode (-p) only; here use default, acceptEdits, plan or bypassPermissions", m)
		}
	case h.Skip:
		mode = string(approval.Auto)
	default:
		return nil
	}
	if approvalGiven && f.Approval != mode {
		return cmdutil.UsageErrorf("--approval %s and the permission flags ask for different modes (%s); give one of them", f.Approval, mode)
	}
	f.Approval = mode
	return nil
}
