package cli

import (
	"github.com/spf13/cobra"

	"github.com/tiny-agent/tiny-go/internal/cli/rewindcmd"
	"github.com/tiny-agent/tiny-go/internal/cli/sessioncmd"
	"github.com/tiny-agent/tiny-go/internal/cli/sessionview"
)

// newSessionCommand is `tiny-go session`: inspection of session files.
// list, show, state, plan and verify are read-only and take no session
// lock; abort, rewind and fork write.
func newSessionCommand(a *app) *cobra.Command {
	f := a.factory()
	cmd := &cobra.Command{
		Use:   "session <command>",
		Short: "Inspect session files",
		Long: `Inspect the durable session files of a working directory
(<cwd>/.tiny-agent/sessions). list, show, state, plan and verify only read:
they never repair a torn tail or take the session lock. abort ends an open
operation durably, without running anything; repair cuts a session changed
by another program back to its last verified commit; rewind puts files back
and writes a fork; fork writes a new session.`,
		RunE: runGroup(a),
	}
	cmd.AddCommand(
		sessionview.NewListCommand(f, newResumeCheck),
		sessionview.NewShowCommand(f),
		sessioncmd.NewStateCommand(f),
		sessioncmd.NewPlanCommand(f),
		sessioncmd.NewVerifyCommand(f),
		sessioncmd.NewRepairCommand(f),
		sessioncmd.NewAbortCommand(f),
		sessioncmd.NewForkCommand(f),
		rewindcmd.NewCommand(f),
	)
	return cmd
}

// The session commands of this package name sessions the way sessioncmd
// does; these keep their names.
var expandSessionID = sessioncmd.ExpandID
