package cli

import (
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/tiny-agent/tiny-go/internal/cli/cmdutil"
)

// suggestion is " (did you mean ...?)" naming the subcommands of cmd close
// to typed, or "".
func suggestion(cmd *cobra.Command, typed string) string {
	if cmd.SuggestionsMinimumDistance <= 0 {
		cmd.SuggestionsMinimumDistance = 2
	}
	s := cmd.SuggestionsFor(typed)
	if len(s) == 0 {
		return ""
	}
	return " (did you mean " + strings.Join(s, " or ") + "?)"
}

// flagError is the usage error of a flag mistake; an unknown flag names
// the nearest flag cmd knows: "unknown flag: --idle-timout (did you mean
// --idle-timeout?)".
func flagError(cmd *cobra.Command, err error) error {
	msg := err.Error()
	if strings.HasPrefix(msg, "unknown shorthand flag: ") {
		return cmdutil.UsageErrorf("%s (%s%s)", msg, shortFlags(cmd), promptHint(cmd))
	}
	typed, ok := strings.CutPrefix(msg, "unknown flag: --")
	if !ok {
		return cmdutil.UsageError{Err: err}
	}
	typed, _, _ = strings.Cut(typed, "=")
	best, bestDist := "", 0
	visit := func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		d := editDistance(typed, f.Name)
		if best == "" || d < bestDist {
			best, bestDist = f.Name, d
		}
	}
	cmd.Flags().VisitAll(visit)
	cmd.InheritedFlags().VisitAll(visit)
	if best == "" || bestDist > max(2, len(typed)/3) {
		if h := promptHint(cmd); h != "" {
			return cmdutil.UsageErrorf("%s (see %s --help%s)", msg, cmdutil.ProgramName, h)
		}
		return cmdutil.UsageError{Err: err}
	}
	return cmdutil.UsageErrorf("%s (did you mean --%s?)", msg, best)
}

// shortFlags names the one-letter flags cmd knows: "the short flags are
// -c, -h, -p, -r and -v".
func shortFlags(cmd *cobra.Command) string {
	var short []string
	visit := func(f *pflag.Flag) {
		if f.Shorthand != "" && !f.Hidden {
			short = append(short, "-"+f.Shorthand)
		}
	}
	cmd.Flags().VisitAll(visit)
	cmd.InheritedFlags().VisitAll(visit)
	switch len(short) {
	case 0:
		return "there are no short flags"
	case 1:
		return "the short flag is " + short[0]
	}
	return "the short flags are " + strings.Join(short[:len(short)-1], ", ") + " and " + short[len(short)-1]
}

// promptHint says, for the root command, where a prompt that starts with
// - goes.
func promptHint(cmd *cobra.Command) string {
	if cmd.HasParent() {
		return ""
	}
	return "; a prompt that starts with - goes after --: " + cmdutil.ProgramName + " -- \"-x ...\""
}

// editDistance is the Levenshtein distance of a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
