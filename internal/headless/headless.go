// Package headless is tiny-go's side of the stream-json protocol the
// Claude Agent SDK speaks to the `claude` executable (`claude -p
// --input-format stream-json --output-format stream-json`): one JSON
// object per line each way. It parses the SDK's lines (user messages,
// control requests and responses), runs each user message as a run of
// the session's agent, and reports the run in Claude Code's message
// shapes (system/init, assistant, user, result), with tool names and
// inputs mapped by internal/cctools. Approvals the mode asks about become
// can_use_tool requests to the SDK. How the session is built is
// internal/cli's, so a headless run behaves as any other tiny-go run.
package headless

import (
	"context"
	"io"

	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/hooks"
	"github.com/tiny-agent/tiny-go/internal/session"
	"github.com/tiny-agent/tiny-go/internal/tools"
)

// Output formats (--output-format).
const (
	FormatText       = "text"
	FormatJSON       = "json"
	FormatStreamJSON = "stream-json"
)

// Options configure one headless process.
type Options struct {
	In  io.Reader
	Out io.Writer
	// Log is stderr: warnings, one line each.
	Log io.Writer
	// OutputGone, when set, is closed when the reader of Out went away:
	// the running turn is aborted durably, as if stdin had closed.
	OutputGone <-chan struct{}
	// Prompt is the prompt of a text-input run (-p PROMPT); with
	// StreamInput the prompts come from In.
	Prompt      string
	StreamInput bool
	// Output is FormatText, FormatJSON or FormatStreamJSON.
	Output string
	// PartialMessages adds stream_event messages with the reply's text
	// as it streams (--include-partial-messages).
	PartialMessages bool
	// PromptTool is set by --permission-prompt-tool stdio: the calls the
	// mode would ask about go to the SDK as can_use_tool.
	PromptTool bool
	// Mode is the permission mode the session starts in.
	Mode Mode
	// AllowBypass lets set_permission_mode switch to bypassPermissions
	// (--allow-dangerously-skip-permissions); launching in it does too.
	AllowBypass bool
	// MaxTurns ends a run after this many model replies (0: no limit).
	MaxTurns int
	// MaxBudgetUSD ends a run once the process's turns cost this much
	// (the provider's reported cost; 0: no limit).
	MaxBudgetUSD float64
	// Rules are --allowedTools and --disallowedTools.
	Rules Rules
	// SDKServers are the SDK's in-process MCP servers --mcp-config names
	// (type "sdk"), connected over the control protocol after initialize.
	SDKServers []string
	// Version is reported as claude_code_version.
	Version string
}

// Session is one open tiny-go session, as the driver needs it.
type Session interface {
	ID() string
	WorkDir() string
	Model() string
	// Tools are the model-facing names of the offered tools.
	Tools() []string
	// MCPServers are the aliases of the connected MCP servers.
	MCPServers() []string
	Agent() *agent.Agent
	State() *session.State
	// Recover finishes an operation a crash left open (nothing that ran
	// runs again); an error says why the session cannot go on.
	Recover(ctx context.Context) error
	// Run runs one prompt as a run of the session.
	Run(ctx context.Context, prompt string) (agent.Result, error)
	// SetModel and SetSystemPrompt rebuild the agent between runs.
	SetModel(model string) error
	SetSystemPrompt(replace, appendText string) error
	// AddHooks adds hooks (the SDK's callbacks) to the session's, for
	// the next calls.
	AddHooks(hs ...hooks.Hook) error
	// AddTools offers the tools of the MCP server alias (one of the SDK's
	// in-process servers) from the next run on.
	AddTools(alias string, ts []tools.Tool) error
	// StoreImage keeps an image beside the sessions and returns the
	// reference that goes into the prompt.
	StoreImage(mediaType string, data []byte, label string) (string, error)
}
