package rewindcmd

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/tiny-agent/tiny-go/internal/cli/cmdutil"
	"github.com/tiny-agent/tiny-go/internal/cli/sessioncmd"
	"github.com/tiny-agent/tiny-go/internal/store"
)

// rewindFlags are the options of `session rewind`.
type rewindFlags struct {
	turn                                        int
	force, filesOnly, conversationOnly, details bool
}

// NewCommand is `tiny-go session rewind <id> --turn N`.
func NewCommand(f *cmdutil.Factory) *cobra.Command {
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
		Args: cmdutil.ExactArgs(1, "a session id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.filesOnly && o.conversationOnly {
				return cmdutil.UsageErrorf("--files-only and --conversation-only exclude each other")
			}
			return runSessionRewind(cmd, f, args[0], o)
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
func runSessionRewind(cmd *cobra.Command, f *cmdutil.Factory, id string, o rewindFlags) error {
	cwd, err := f.WorkDir()
	if err != nil {
		return err
	}
	if id, err = sessioncmd.ExpandID(cwd, id); err != nil {
		return err
	}
	if !store.ValidID(id) {
		return sessioncmd.NoSession(id, cwd)
	}
	path, err := sessioncmd.Path(f, id)
	if err != nil {
		return err
	}
	release, err := lockForRewind(path, id)
	if err != nil {
		return err
	}
	defer release()
	capBytes, err := CheckpointCap(f.Getenv)
	if err != nil {
		return cmdutil.UsageError{Err: err}
	}
	j, err := Pending(path)
	if err != nil {
		return err
	}
	finished := j != nil
	if j == nil {
		if !cmd.Flags().Changed("turn") {
			return cmdutil.UsageErrorf("--turn N is required (session show %s lists the turns)", id)
		}
		req := Request{Path: path, Turn: o.turn, Force: o.force, Files: !o.conversationOnly, Conversation: !o.filesOnly}
		if j, err = Plan(cmd.Context(), req, capBytes); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(f.Stderr, "Finishing the interrupted rewind to before turn %d first.\n", j.Turn.N)
		if cmd.Flags().Changed("turn") && o.turn != j.Turn.N {
			defer fmt.Fprintf(f.Stderr, "Run the command again to rewind to before turn %d.\n", o.turn)
		}
	}
	gitDone := ""
	if !o.details {
		gitDone = gitDoneOf(cmd.Context(), path, j, capBytes)
	}
	out, err := Execute(cmd.Context(), j, capBytes, finished)
	if err != nil {
		return err
	}
	if o.details {
		writeRewindOutcome(f.Stdout, out)
	} else {
		writeOutcomeWords(f.Stdout, out, gitDone)
	}
	return nil
}
