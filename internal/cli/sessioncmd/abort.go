package sessioncmd

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/cli/cmdutil"
	"github.com/tiny-agent/tiny-go/internal/provider"
	"github.com/tiny-agent/tiny-go/internal/session"
	"github.com/tiny-agent/tiny-go/internal/store"
)

// newSessionAbortCommand is `tiny-go session abort <id>`: the explicit way
// out of a blocked or abandoned operation. It appends abortRequested and
// reconciles without effects (closes an open attempt, answers open calls
// with synthetic results, and finishes the operation aborted); no model is
// called and no tool runs.
func NewAbortCommand(a *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "abort <id>",
		Short: "Abort the open operation of a session, without running anything",
		Args:  cmdutil.ExactArgs(1, "a session id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			cwd, err := a.WorkDir()
			if err != nil {
				return err
			}
			return abortSession(cmd.Context(), a, cwd, args[0])
		},
	}
}

func abortSession(ctx context.Context, a *cmdutil.Factory, cwd, id string) error {
	if ctx == nil {
		ctx = context.Background()
	}
	id, err := ExpandID(cwd, id)
	if err != nil {
		return err
	}
	if !store.ValidID(id) {
		return NoSession(id, cwd)
	}
	st, err := store.Open(cwd, id, store.Options{})
	if errors.Is(err, fs.ErrNotExist) {
		return NoSession(id, cwd)
	}
	if err != nil {
		return err
	}
	defer st.Close()
	op := st.State().Operation
	if op == nil {
		fmt.Fprintf(a.Stdout, "Session %s has no open operation; nothing to abort.\n", id)
		return nil
	}
	envID, err := store.EnvironmentIdentity(cwd, a.Getenv)
	if err != nil {
		return err
	}
	ag, err := agent.New(agent.Config{
		Log:                 st,
		Provider:            noProvider{},
		Model:               st.State().Header.Model,
		EnvironmentIdentity: envID,
		NewID:               func() string { return uuid.Must(uuid.NewV7()).String() },
	})
	if err != nil {
		return err
	}
	if _, err := ag.Abort(ctx); err != nil {
		return err
	}
	res, err := ag.Resume(ctx)
	if err != nil {
		return fmt.Errorf("reconcile the abort: %w", err)
	}
	if res.Outcome != session.OutcomeAborted {
		return fmt.Errorf("the %s ended %s instead of aborted", op.Kind, res.Outcome)
	}
	fmt.Fprintf(a.Stdout, "Aborted the open %s %s of session %s.\n", op.Kind, op.OperationID, id)
	return nil
}

// noProvider is the provider of an abort: reconciliation never calls it.
type noProvider struct{}

func (noProvider) Stream(context.Context, provider.Request, func(provider.Delta)) (provider.Response, error) {
	return provider.Response{}, errors.New("session abort makes no model requests")
}
