package cli

import (
	"strings"

	"github.com/spf13/cobra"
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
