// Package acp makes tiny-go an Agent Client Protocol agent: an editor
// (Zed, JetBrains, Neovim) drives durable tiny-go sessions over JSON-RPC on
// the process's stdin and stdout. The wire format is that of
// github.com/coder/acp-go-sdk (types generated from the official schema);
// this package maps the agent's events, approvals and session history onto
// it. How a session is built (provider, tools, sandbox, store) is the
// Backend's, which internal/cli implements with the same code as the
// terminal, so a session driven from an editor behaves exactly as one
// driven from the terminal.
package acp

import (
	"context"
	"github.com/tiny-agent/tiny-go/internal/commands"
	"time"

	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/approval"
	"github.com/tiny-agent/tiny-go/internal/mcp"
	"github.com/tiny-agent/tiny-go/internal/session"
	"github.com/tiny-agent/tiny-go/internal/tools"
)

// Backend builds the sessions an editor asks for.
type Backend interface {
	// MissingKey names the environment variable that must hold the model
	// key, with the line that tells the user what to do; "" when the
	// provider is configured.
	MissingKey() (envVar, message string)
	// Open creates a session (req.SessionID empty) or opens the durable
	// session req.SessionID of req.Cwd. An open operation is left pending:
	// the caller recovers it (Agent().Resume) before anything else.
	Open(ctx context.Context, req OpenRequest) (Session, error)
	// List is the sessions of cwd for session/list, newest first, each
	// subagent's right after its parent's.
	List(cwd string) ([]Listed, error)
}

// Listed is one session of a listing.
type Listed struct {
	ID        string
	Title     string
	UpdatedAt time.Time
	// Parent and Agent are set for a subagent's session (docs/agents.md).
	Parent, Agent string
}

// OpenRequest is what a session is built from.
type OpenRequest struct {
	Cwd       string
	SessionID string
	// MCPNames are the names of the MCP servers the client gave. A name
	// that is an alias of the MCP catalog ($TINY_MCP_CONFIG) connects that
	// entry, beside the --mcp servers; the catalog lists the tools each
	// server may offer (allowedTools), which the client cannot.
	MCPNames []string
	Host     Host
}

// Host is how the agent of a session reaches the editor.
type Host struct {
	// Events receives every agent event.
	Events func(agent.Event)
	// Ask puts an approval question to the user.
	Ask approval.AskFunc
	// Approve wraps the session's approval gate, so Ask knows which call
	// it is asked about.
	Approve func(agent.ApproveFunc) agent.ApproveFunc
	// Editor, when set, is where read, write and edit go for the files
	// the client offers (fs/read_text_file, fs/write_text_file).
	Editor tools.Editor
	// Mode is the session's mode as the editor sets it (session/set_mode):
	// the tools follow it (plan mode: planmode).
	Mode *approval.Switch
	// Elicit puts an MCP server's form to the user (elicit.go).
	Elicit mcp.ElicitFunc
}

// Rewinder is a session that can be put back to before a user turn
// (/rewind), with the same plan, journal and fork as the terminal's.
type Rewinder interface {
	// RewindTurns lists the user turns, one line each.
	RewindTurns() ([]string, error)
	// PlanRewind describes what a rewind would do; apply does it and
	// says what it did.
	PlanRewind(ctx context.Context, req RewindRequest) (preview []string, apply func(context.Context) ([]string, error), err error)
}

// RewindRequest is a parsed /rewind N [files|conversation] [force].
type RewindRequest = commands.RewindArgs

// Session is one open tiny-go session.
type Session interface {
	ID() string
	// WorkDir is the session's absolute working directory.
	WorkDir() string
	Agent() *agent.Agent
	// State is the session's reduced state (its transcript is replayed on
	// session/load).
	State() *session.State
	// Close releases the session: its processes, MCP servers and file.
	Close()
}
