package cli

import (
	"context"
	"path/filepath"
	"strings"

	"github.com/tiny-agent/tiny-go/internal/attach"
	"github.com/tiny-agent/tiny-go/internal/commands"

	"github.com/tiny-agent/tiny-go/internal/todo"
	"github.com/tiny-agent/tiny-go/internal/ui"
)

// interactive runs the terminal UI (or line mode without a TTY) until the
// user exits; the UI prints the resume hint.
func (a *runner) interactive(ctx context.Context) error {
	if a.preUI != nil {
		a.preUI.on.Store(false)
		a.preUI.inner.Close()
	}
	home := a.io.getenv("HOME")
	custom, problems := commands.Load(commands.Dirs(a.cwd, home)...)
	custom = skillCommands(a.skills, custom)
	for i, p := range problems {
		// Paths as the user would type them.
		p = strings.ReplaceAll(p, a.cwd+string(filepath.Separator), "")
		if home != "" {
			p = strings.ReplaceAll(p, home+string(filepath.Separator), "~/")
		}
		problems[i] = p
	}
	return ui.Run(ctx, ui.Options{
		In:          a.io.stdin,
		Out:         a.io.stdout,
		Engine:      currentEngine{a},
		Rewinder:    &interactiveRewinder{a: a},
		Host:        interactiveHost{a},
		Commands:    custom,
		Problems:    problems,
		Mentions:    attach.NewIndex(a.cwd),
		StoreImage:  a.storeImage,
		Observer:    a.uiObserver,
		History:     ui.NewHistory(a.cwd),
		Recap:       a.recap(),
		Todos:       todo.FromState(a.store.State()),
		Mode:        a.mode,
		Banner:      a.banner(),
		ExpandSkill: func(input string) (string, error) { return a.expand(input) },
		// A new session whose every request failed for its settings is
		// removed at exit instead of being offered for a resume.
		Resumable: func() bool { return !a.discardConfigFailure() && a.resumable() },
	})
}
