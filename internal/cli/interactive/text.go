package interactive

import (
	"context"
	"path/filepath"
	"strings"

	"github.com/tiny-agent/tiny-go/internal/attach"
	"github.com/tiny-agent/tiny-go/internal/cli/promptwire"
	"github.com/tiny-agent/tiny-go/internal/commands"

	"github.com/tiny-agent/tiny-go/internal/todo"
	"github.com/tiny-agent/tiny-go/internal/ui"
)

// interactive runs the terminal UI (or line mode without a TTY) until the
// user exits; the UI prints the resume hint.
func (a *runner) loop(ctx context.Context) error {
	if a.PreUI != nil {
		a.PreUI.On.Store(false)
		a.PreUI.Inner.Close()
	}
	home := a.IO.Getenv("HOME")
	custom, problems := commands.Load(commands.Dirs(a.Cwd, home)...)
	custom = promptwire.SkillCommands(a.Skills, custom)
	for i, p := range problems {
		// Paths as the user would type them.
		p = strings.ReplaceAll(p, a.Cwd+string(filepath.Separator), "")
		if home != "" {
			p = strings.ReplaceAll(p, home+string(filepath.Separator), "~/")
		}
		problems[i] = p
	}
	return ui.Run(ctx, ui.Options{
		In:          a.IO.Stdin,
		Out:         a.IO.Stdout,
		Engine:      currentEngine{a},
		Rewinder:    &Rewinder{a: a},
		Host:        Host{a},
		Commands:    custom,
		Problems:    problems,
		Mentions:    attach.NewIndex(a.Cwd),
		StoreImage:  func(att attach.Attachment) (string, error) { return promptwire.StoreImage(a.Cwd, att) },
		Observer:    a.UIObserver,
		History:     ui.NewHistory(a.Cwd),
		Recap:       a.recap(),
		Todos:       todo.FromState(a.Store.State()),
		Mode:        a.Mode,
		Banner:      a.banner(),
		ExpandSkill: func(input string) (string, error) { return a.Expand(input) },
		// A new session whose every request failed for its settings is
		// removed at exit instead of being offered for a resume.
		Resumable: func() bool { return !a.DiscardConfigFailure() && a.Resumable() },
	})
}
