package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/tiny-agent/tiny-go/internal/store"
)

// rewindFlags are the options of `session rewind`.
type rewindFlags struct {
	turn                                        int
	force, filesOnly, conversationOnly, details bool
}

// newSessionRewindCommand is `tiny-go session rewind <id> --turn N`.
func newSessionRewindCommand(a *app) *cobra.Command {
	var o rewindFlags
	cmd := &cobra.Command{
		Use:   "rewind <id> --turn N",
		Short: "Put files (and the conversation) back to before a user turn",
		Long: `Put the working directory's files back to how they were before user turn N
(1 is the first prompt; session show lists them), file by file, from the
checkpoints taken before every write, edit and command, and fork the
conversation at that turn into a new session (the original is unchanged).

A file that changed since tiny-go last changed it (by you, or outside
tiny-go) is not overwritten unless --force; it is listed as skipped. What a
checkpoint could not keep (too large, unreadable, dropped under the store's
cap) is said, never silently skipped. The rewind is itself a checkpoint, so
a later rewind can undo it. Interrupted (even by kill -9), it leaves every
file either put back or untouched; running it again finishes it.`,
		Args: exactArgs(1, "a session id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.filesOnly && o.conversationOnly {
				return usageErrorf("--files-only and --conversation-only exclude each other")
			}
			return runSessionRewind(cmd, a, args[0], o)
		},
	}
	cmd.Flags().IntVar(&o.turn, "turn", 0, "the user turn to go back to before (1 = the first prompt)")
	cmd.Flags().BoolVar(&o.force, "force", false, "also overwrite files changed since tiny-go last changed them")
	cmd.Flags().BoolVar(&o.filesOnly, "files-only", false, "put files back; keep the conversation")
	cmd.Flags().BoolVar(&o.conversationOnly, "conversation-only", false, "fork the conversation; leave the files")
	cmd.Flags().BoolVar(&o.details, "details", false, "list every file put back, git's own included (by default git's changes are said in words: branches, commits)")
	return cmd
}

// runSessionRewind finishes an interrupted rewind of the session, or plans
// and runs the one asked for, and says what it did.
func runSessionRewind(cmd *cobra.Command, a *app, id string, o rewindFlags) error {
	cwd, err := a.workDir()
	if err != nil {
		return err
	}
	if id, err = expandSessionID(cwd, id); err != nil {
		return err
	}
	if !store.ValidID(id) {
		return noSession(id, cwd)
	}
	path, err := a.sessionPath(id)
	if err != nil {
		return err
	}
	release, err := lockForRewind(path, id)
	if err != nil {
		return err
	}
	defer release()
	capBytes, err := checkpointCap(a.getenv)
	if err != nil {
		return usageError{Err: err}
	}
	j, err := pendingRewind(path)
	if err != nil {
		return err
	}
	finished := j != nil
	if j == nil {
		if !cmd.Flags().Changed("turn") {
			return usageErrorf("--turn N is required (session show %s lists the turns)", id)
		}
		req := rewindRequest{Path: path, Turn: o.turn, Force: o.force, Files: !o.conversationOnly, Conversation: !o.filesOnly}
		if j, err = planRewind(cmd.Context(), req, capBytes); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(a.stderr, "Finishing the interrupted rewind to before turn %d first.\n", j.Turn.N)
		if cmd.Flags().Changed("turn") && o.turn != j.Turn.N {
			defer fmt.Fprintf(a.stderr, "Run the command again to rewind to before turn %d.\n", o.turn)
		}
	}
	gitDone := ""
	if !o.details {
		gitDone = gitDoneOf(cmd.Context(), path, j, capBytes)
	}
	out, err := executeRewind(cmd.Context(), j, capBytes, finished)
	if err != nil {
		return err
	}
	if o.details {
		writeRewindOutcome(a.stdout, out)
	} else {
		writeOutcomeWords(a.stdout, out, gitDone)
	}
	return nil
}
