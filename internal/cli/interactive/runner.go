// Package interactive is the terminal front end of an assembled Runner:
// the UI's host (/model, /resume, /clear, !commands, the info commands),
// /rewind, and --resume's session picker.
package interactive

import (
	"context"

	"github.com/tiny-agent/tiny-go/internal/cli/assemble"
)

// runner is the assembled runner seen by the interactive front end, which
// adds the terminal's commands to it.
type runner struct{ *assemble.Runner }

// NewHost is the terminal's commands for r, which an editor offers too
// (ACP's /agents, /todos, /mcp, /hooks, /permissions).
func NewHost(r *assemble.Runner) Host { return Host{&runner{r}} }

// NewRewinder is the terminal's /rewind for r, which an editor drives too.
func NewRewinder(r *assemble.Runner) *Rewinder { return &Rewinder{&runner{r}} }

// Run is the interactive mode on r: the terminal UI until the user quits.
func Run(ctx context.Context, r *assemble.Runner) error { return (&runner{r}).loop(ctx) }
