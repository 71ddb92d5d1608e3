package headless

import (
	"encoding/json"
	"time"

	"github.com/google/uuid"

	"github.com/tiny-agent/tiny-go/internal/session"
)

// The messages tiny-go writes, in Claude Code's stream-json shapes. Only
// the members the SDK reads or documents are filled; tiny-go has no value
// for the rest (docs/headless.md).

type initMessage struct {
	Type           string      `json:"type"`
	Subtype        string      `json:"subtype"`
	CWD            string      `json:"cwd"`
	SessionID      string      `json:"session_id"`
	Tools          []string    `json:"tools"`
	MCPServers     []mcpStatus `json:"mcp_servers"`
	Model          string      `json:"model"`
	PermissionMode string      `json:"permissionMode"`
	SlashCommands  []string    `json:"slash_commands"`
	APIKeySource   string      `json:"apiKeySource"`
	Version        string      `json:"claude_code_version"`
	OutputStyle    string      `json:"output_style"`
	Skills         []string    `json:"skills"`
	Plugins        []string    `json:"plugins"`
	Agents         []string    `json:"agents"`
	UUID           string      `json:"uuid"`
}

type mcpStatus struct {
	Name   string `json:"name"`
	Status string `json:"status"`
}

type assistantMessage struct {
	Type            string     `json:"type"`
	Message         apiMessage `json:"message"`
	ParentToolUseID *string    `json:"parent_tool_use_id"`
	SessionID       string     `json:"session_id"`
	UUID            string     `json:"uuid"`
	Timestamp       string     `json:"timestamp,omitempty"`
}

// apiMessage is an Anthropic Messages API message.
type apiMessage struct {
	ID           string    `json:"id"`
	Type         string    `json:"type"`
	Role         string    `json:"role"`
	Model        string    `json:"model"`
	Content      []block   `json:"content"`
	StopReason   *string   `json:"stop_reason"`
	StopSequence *string   `json:"stop_sequence"`
	Usage        *apiUsage `json:"usage,omitempty"`
}

// block is a content block: text, tool_use or tool_result.
type block struct {
	Type      string          `json:"type"`
	Text      *string         `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   *string         `json:"content,omitempty"`
	IsError   *bool           `json:"is_error,omitempty"`
}

type userMessage struct {
	Type            string          `json:"type"`
	Message         userBody        `json:"message"`
	ParentToolUseID *string         `json:"parent_tool_use_id"`
	SessionID       string          `json:"session_id"`
	UUID            string          `json:"uuid"`
	Timestamp       string          `json:"timestamp,omitempty"`
	ToolUseResult   json.RawMessage `json:"tool_use_result,omitempty"`
}

// now is a message's timestamp as Claude Code writes it (UTC, ms).
func now() string { return time.Now().UTC().Format("2006-01-02T15:04:05.000Z") }

type userBody struct {
	Role    string  `json:"role"`
	Content []block `json:"content"`
}

type apiUsage struct {
	InputTokens              int64          `json:"input_tokens"`
	OutputTokens             int64          `json:"output_tokens"`
	CacheReadInputTokens     int64          `json:"cache_read_input_tokens"`
	CacheCreationInputTokens int64          `json:"cache_creation_input_tokens"`
	ServerToolUse            *serverToolUse `json:"server_tool_use,omitempty"`
	ServiceTier              string         `json:"service_tier,omitempty"`
}

type serverToolUse struct {
	WebSearchRequests int64 `json:"web_search_requests"`
	WebFetchRequests  int64 `json:"web_fetch_requests"`
}

// resultMessage ends every turn.
type resultMessage struct {
	Type              string             `json:"type"`
	Subtype           string             `json:"subtype"`
	IsError           bool               `json:"is_error"`
	DurationMS        int64              `json:"duration_ms"`
	DurationAPIMS     int64              `json:"duration_api_ms"`
	NumTurns          int                `json:"num_turns"`
	Result            string             `json:"result"`
	StopReason        *string            `json:"stop_reason"`
	SessionID         string             `json:"session_id"`
	TotalCostUSD      float64            `json:"total_cost_usd"`
	Usage             apiUsage           `json:"usage"`
	ModelUsage        map[string]any     `json:"modelUsage"`
	PermissionDenials []permissionDenial `json:"permission_denials"`
	// Errors is set on every error subtype: the SDK joins it into the
	// error it throws.
	Errors []string `json:"errors,omitempty"`
	UUID   string   `json:"uuid"`
}

type permissionDenial struct {
	ToolName  string          `json:"tool_name"`
	ToolUseID string          `json:"tool_use_id"`
	ToolInput json.RawMessage `json:"tool_input"`
}

// Result subtypes.
const (
	resultSuccess    = "success"
	resultMaxTurns   = "error_max_turns"
	resultBudget     = "error_max_budget_usd"
	resultExecution  = "error_during_execution"
	streamEventType  = "stream_event"
	controlRequest   = "control_request"
	controlResponse  = "control_response"
	controlCancelReq = "control_cancel_request"
)

type streamEvent struct {
	Type            string  `json:"type"`
	Event           any     `json:"event"`
	ParentToolUseID *string `json:"parent_tool_use_id"`
	SessionID       string  `json:"session_id"`
	UUID            string  `json:"uuid"`
}

type outRequest struct {
	Type      string `json:"type"`
	RequestID string `json:"request_id"`
	Request   any    `json:"request"`
}

type outResponse struct {
	Type     string       `json:"type"`
	Response responseBody `json:"response"`
}

type responseBody struct {
	Subtype   string `json:"subtype"`
	RequestID string `json:"request_id"`
	Response  any    `json:"response,omitempty"`
	Error     string `json:"error,omitempty"`
}

func newUUID() string { return uuid.Must(uuid.NewV7()).String() }

func usageOf(u session.Usage) apiUsage {
	return apiUsage{
		InputTokens: u.Input, OutputTokens: u.Output,
		CacheReadInputTokens: u.CacheRead, CacheCreationInputTokens: u.CacheWrite,
		ServerToolUse: &serverToolUse{}, ServiceTier: "standard",
	}
}

func strPtr(s string) *string { return &s }
