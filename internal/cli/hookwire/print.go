package hookwire

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/tiny-agent/tiny-go/internal/cli/cmdutil"
	"github.com/tiny-agent/tiny-go/internal/hooks"
)

// Print is the hooks part of `tiny-go config` and /hooks: each hook, its
// matcher and where it came from, then what cannot be used.
func Print(w io.Writer, cfg *hooks.Config) error {
	fmt.Fprintln(w)
	if len(cfg.Hooks) == 0 {
		fmt.Fprintln(w, "hooks: none (.claude/settings.json, .claude/settings.local.json, ~/.claude/settings.json, [hooks] of config.toml)")
	} else {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "HOOK\tMATCHER\tCOMMAND\tTIMEOUT\tFROM")
		for _, h := range cfg.Hooks {
			m := h.Matcher
			if m == "" {
				m = "*"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", h.Event, m, cmdutil.OneLine(h.Command), h.Timeout, h.Source)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	for _, p := range cfg.Problems {
		fmt.Fprintf(w, "hook problem: %s\n", p)
	}
	return nil
}
