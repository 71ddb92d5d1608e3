package cli

import (
	"context"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/session"
	"github.com/tiny-agent/tiny-go/internal/ui"
)

// textObserver writes the one-shot tool log to stderr: "◆ <tool> <args>"
// when a tool starts and "  └ <summary>" when it ends. The answer itself is
// printed on stdout by the caller.
type textObserver struct {
	mu sync.Mutex
	w  io.Writer
}

func newTextObserver(w io.Writer) *textObserver { return &textObserver{w: w} }

func (o *textObserver) event(ev agent.Event) {
	switch ev := ev.(type) {
	case agent.ToolStarted:
		o.mu.Lock()
		defer o.mu.Unlock()
		fmt.Fprintln(o.w, ui.ToolStartLine(ev.Tool, 0))
	case agent.ToolCompleted:
		o.mu.Lock()
		defer o.mu.Unlock()
		fmt.Fprintln(o.w, ui.ToolResultLine(ev.Tool, ev.Outcome))
	case agent.OperationStarted:
		if ev.Kind == session.OperationCompaction {
			o.mu.Lock()
			defer o.mu.Unlock()
			fmt.Fprintln(o.w, "compacting…")
		}
	case agent.ModelRetrying:
		o.mu.Lock()
		defer o.mu.Unlock()
		fmt.Fprintln(o.w, ev.Wait.String())
	}
}

// interactive runs the terminal UI (or line mode without a TTY) until the
// user exits; the UI prints the resume hint.
func (a *runner) interactive(ctx context.Context) error {
	if a.preUI != nil {
		a.preUI.on.Store(false)
	}
	return ui.Run(ctx, ui.Options{
		In:       a.io.stdin,
		Out:      a.io.stdout,
		Engine:   currentEngine{a},
		Rewinder: &interactiveRewinder{a: a},
		Observer: a.uiObserver,
		Banner: ui.Banner{
			Provider:    a.access.name,
			Endpoint:    a.endpointShown,
			Model:       a.model,
			SessionID:   a.store.ID(),
			SessionPath: a.store.Path(),
			Tools:       a.toolNames,
			MCP:         a.mcpAliases,
			Restored:    a.resumed,
		},
		ExpandSkill: func(input string) (string, error) { return a.expand(input) },
		Resumable:   a.resumable,
	})
}

// gatedObserver forwards tool lines to inner while on is set.
type gatedObserver struct {
	inner *textObserver
	on    atomic.Bool
}

func (g *gatedObserver) event(ev agent.Event) {
	if g.on.Load() {
		g.inner.event(ev)
	}
}
