package cli

import (
	"context"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/ui"
)

// textObserver writes the one-shot tool log to stderr: "◆ <tool> <args>"
// when a tool starts and "  └ <summary>" when it ends. The answer itself is
// printed on stdout by the caller.
type textObserver struct {
	agent.NopObserver
	mu sync.Mutex
	w  io.Writer
}

func newTextObserver(w io.Writer) *textObserver { return &textObserver{w: w} }

func (o *textObserver) ToolStarted(t agent.ToolInfo) {
	o.mu.Lock()
	defer o.mu.Unlock()
	fmt.Fprintln(o.w, ui.ToolStartLine(t, 0))
}

func (o *textObserver) ToolCompleted(t agent.ToolInfo, r agent.ToolOutcome) {
	o.mu.Lock()
	defer o.mu.Unlock()
	fmt.Fprintln(o.w, ui.ToolResultLine(t, r))
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
		Engine:   a.agent,
		Observer: a.uiObserver,
		Banner: ui.Banner{
			Provider:    providerName,
			Endpoint:    a.endpointShown,
			Model:       a.model,
			SessionID:   a.store.ID(),
			SessionPath: a.store.Path(),
			Tools:       a.toolNames,
			MCP:         a.mcpAliases,
			Restored:    a.resumed,
		},
		ExpandSkill: func(input string) (string, error) { return a.expand(input) },
	})
}

// gatedObserver forwards tool lines to inner while on is set.
type gatedObserver struct {
	agent.NopObserver
	inner *textObserver
	on    atomic.Bool
}

func (g *gatedObserver) ToolStarted(t agent.ToolInfo) {
	if g.on.Load() {
		g.inner.ToolStarted(t)
	}
}

func (g *gatedObserver) ToolCompleted(t agent.ToolInfo, r agent.ToolOutcome) {
	if g.on.Load() {
		g.inner.ToolCompleted(t, r)
	}
}
