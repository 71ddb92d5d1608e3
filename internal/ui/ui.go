// Package ui is tiny-go's interactive mode: an inline Bubble Tea program
// (the scrollback stays the user's; only the live area — streaming text, a
// status line and the input box — is redrawn) and, without a terminal, a
// line mode that reads prompts from stdin. Both modes accept the same
// commands (/compact, /skill:name, /exit) and share the formatting code.
package ui

import (
	"context"
	"io"
	"os"

	"golang.org/x/term"

	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/approval"
	"github.com/tiny-agent/tiny-go/internal/attach"
	"github.com/tiny-agent/tiny-go/internal/commands"
	"github.com/tiny-agent/tiny-go/internal/session"
	"github.com/tiny-agent/tiny-go/internal/todo"
)

// Engine is what the UI drives; *agent.Agent implements it. Run and Compact
// block until the operation ends; Abort may be called from any goroutine
// while one of them is in progress.
type Engine interface {
	Run(ctx context.Context, prompt string) (agent.Result, error)
	Compact(ctx context.Context) (agent.Result, agent.CompactStats, error)
	Abort(ctx context.Context) (bool, error)
}

// Banner is what the interactive banner shows (cli.md "Interactive mode").
type Banner struct {
	Provider    string
	Endpoint    string
	Model       string
	SessionID   string
	SessionPath string
	Tools       []string
	MCP         []string // connected MCP aliases
	Restored    bool     // the session was resumed
}

// Options configure Run and RunLines.
type Options struct {
	In  io.Reader // default os.Stdin
	Out io.Writer // default os.Stdout

	Engine Engine
	// Observer must be the observer (or one of the observers) the agent
	// was built with; Run attaches it to the program for the duration of
	// the session. Nil means no progress is shown, only results.
	Observer *Observer
	Banner   Banner
	// Recap is the transcript of a resumed session: its last turns are
	// shown after the banner, before the first prompt.
	Recap []session.Message
	// Todos is the model's todo list of a resumed session (todo.FromState).
	Todos todo.List
	// Mode is the approval mode Shift+Tab cycles (ask, auto, plan); nil
	// shows no mode and cycles nothing.
	Mode *approval.Switch
	// History keeps the inputs of the working directory across runs
	// (Up, Down and Ctrl+R browse it); nil keeps them in memory only.
	History *History

	// ExpandSkill turns a whole "/skill:name [text]" input into the user
	// message to send. Its error is shown as is (e.g. "Unknown skill: x").
	// Nil means skills are unavailable.
	ExpandSkill func(input string) (string, error)

	// Rewinder carries out /rewind (rewind.go); nil means unavailable.
	Rewinder Rewinder

	// Host carries out /model, /status, /cost, /clear, /resume and !cmd
	// (host.go); nil means unavailable.
	Host Host
	// Commands are the custom slash commands (commands.Load); Problems
	// the lines about command files that could not be used, shown after
	// the banner.
	Commands []commands.Command
	Problems []string
	// Mentions completes @paths and resolves them at submit; nil leaves
	// @words as text.
	Mentions *attach.Index
	// StoreImage keeps an attached image beside the session and returns
	// the text that names it in the prompt; nil refuses images.
	StoreImage func(attach.Attachment) (string, error)

	// OnExit, when set, runs once after the terminal has been restored
	// (on every exit path, a crash of the program included) and before
	// the resume hint is printed.
	OnExit func()

	// Resumable, when set, tells at exit whether the session holds
	// anything to resume; the resume hint is printed only then (a session
	// that never got a prompt is removed on exit).
	Resumable func() bool
}

func (o Options) in() io.Reader {
	if o.In == nil {
		return os.Stdin
	}
	return o.In
}

func (o Options) out() io.Writer {
	if o.Out == nil {
		return os.Stdout
	}
	return o.Out
}

// IsTerminal reports whether Run would use the full-screen-less terminal
// UI for these streams (both must be terminals); otherwise it uses line
// mode.
func IsTerminal(in io.Reader, out io.Writer) bool {
	return isTTY(in) && isTTY(out)
}

func isTTY(v any) bool {
	f, ok := v.(interface{ Fd() uintptr })
	return ok && term.IsTerminal(int(f.Fd()))
}

// ResumeHint is the line printed on exit: "Resume: tiny-go --session <id>".
func ResumeHint(sessionID string) string {
	return "Resume: tiny-go --session " + sessionID
}

func termSize(fd int) (width, height int, err error) { return term.GetSize(fd) }
