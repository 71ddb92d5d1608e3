package ui

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/tiny-agent/tiny-go/internal/interrupt"
	"golang.org/x/term"
)

// unwindWait bounds how long Run waits, after the program was killed, for
// the engine calls it started to return once their context is cancelled.
const unwindWait = 5 * time.Second

// Run is interactive mode. With a terminal on both ends it runs the inline
// terminal UI, otherwise RunLines. It returns when the user exits (/exit,
// Ctrl+C, Ctrl+D on an empty input, EOF in line mode) or ctx ends, after
// every engine call it started has returned, the terminal is restored and
// the resume hint has been printed.
//
// SIGINT, SIGTERM and SIGHUP take the Ctrl+C path (abort what is active,
// wait for it, exit) while Run is in progress; the caller should not also
// cancel ctx on them, which would stop the operation without an abort.
func Run(ctx context.Context, opts Options) error {
	if opts.Engine == nil {
		return errors.New("ui: Options.Engine is required")
	}
	if !IsTerminal(opts.in(), opts.out()) {
		return RunLines(ctx, opts)
	}
	err := runTTY(ctx, opts)
	finish(opts)
	return err
}

func runTTY(ctx context.Context, opts Options) (err error) {
	m := newModel(ctx, opts.Engine, opts.Banner, opts.ExpandSkill)
	m.rewinder = opts.Rewinder
	m.host, m.custom, m.problems = opts.Host, opts.Commands, opts.Problems
	m.mentions, m.images = opts.Mentions, opts.StoreImage
	m.reflows = terminalReflows(os.Getenv)
	if f, ok := opts.out().(*os.File); ok {
		fd := int(f.Fd())
		m.termSize = func() (int, int, bool) {
			w, h, err := term.GetSize(fd)
			return w, h, err == nil
		}
	}
	m.recap = opts.Recap
	m.todos = opts.Todos
	m.mode = opts.Mode
	if m.store = opts.History; m.store != nil {
		if entries, err := m.store.Load(); err == nil {
			m.hist.entries, m.hist.pos = entries, len(entries)
		} else {
			m.notice = sanitizeLine(err.Error())
		}
	}
	p := tea.NewProgram(m,
		tea.WithContext(ctx),
		tea.WithInput(opts.in()),
		tea.WithOutput(opts.out()),
		// Signals are handled below so that they abort before exiting.
		tea.WithoutSignalHandler(),
		tea.WithFilter(resizeFilter),
	)
	detach := opts.Observer.attach(func(msg any) { p.Send(msg) })
	defer detach()

	sigs, stopSignals := interrupt.Notify()
	defer stopSignals()
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case <-sigs:
				p.Send(interruptMsg{})
			case <-stop:
				return
			}
		}
	}()

	defer func() {
		// A panic outside Bubble Tea's own recovery (which restores the
		// terminal itself) must still leave a usable terminal.
		if r := recover(); r != nil {
			p.Kill()
			err = fmt.Errorf("interactive mode crashed: %v", r)
		}
	}()
	_, runErr := p.Run()
	m.dropForms() // a server waiting on a form hears it was cancelled
	if runErr != nil {
		// Killed (ctx ended, or a panic that Bubble Tea recovered): stop
		// the engine calls rather than leave them writing the session
		// while the caller closes it.
		m.force()
	}
	waitBounded(m, unwindWait)
	switch {
	case runErr == nil:
		return nil
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.Is(runErr, tea.ErrProgramPanic):
		return errors.New("interactive mode crashed; the terminal was restored")
	default:
		return fmt.Errorf("interactive mode: %w", runErr)
	}
}

func waitBounded(m *model, d time.Duration) {
	done := make(chan struct{})
	go func() {
		m.calls.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(d):
	}
}

// finish runs the exit hook and prints the resume hint.
func finish(opts Options) {
	if opts.OnExit != nil {
		opts.OnExit()
	}
	id := opts.Banner.SessionID
	if cur, ok := opts.Rewinder.(interface{ SessionID() string }); ok && cur.SessionID() != "" {
		id = cur.SessionID() // a conversation rewind moved to a fork
	}
	if id != "" && (opts.Resumable == nil || opts.Resumable()) {
		fmt.Fprintln(opts.out(), ResumeHint(id))
	}
}
