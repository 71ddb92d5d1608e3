// Package anthropic speaks Anthropic's Messages API (streaming, tool use,
// extended thinking, prompt-cache breakpoints) as a provider.Provider, over
// the provider package's transport, so timeouts, the size bound, retries
// and error classes are those of every other provider.
//
// The session records OpenAI-shaped messages; this package converts them
// to content blocks and back. Thinking blocks travel as the reply's
// ReasoningDetails: a JSON array of the thinking and redacted_thinking
// blocks, signatures intact, sent back before the message's other blocks.
package anthropic

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/tiny-agent/tiny-go/internal/provider"
)

// Identities of this adapter in the configuration snapshot (session.md
// §4): a session started here resumes only here.
const (
	AdapterIdentity = "anthropic:messages:v1"
	RoutingPrefix   = "anthropic:"
)

// Defaults.
const (
	DefaultEndpoint = "https://api.anthropic.com/v1"
	// APIVersion is the anthropic-version header.
	APIVersion = "2023-06-01"
	// DefaultMaxTokens bounds a reply without thinking; thinking adds its
	// budget on top.
	DefaultMaxTokens = 8192
)

// Config configures a client.
type Config struct {
	// Transport is the provider transport: Endpoint (the API base URL,
	// "/messages" is appended), APIKey (sent as x-api-key), timeouts and
	// size bound. Its Reasoning is the thinking effort.
	Transport provider.Config
	// MaxTokens overrides the reply bound (0: DefaultMaxTokens plus the
	// thinking budget).
	MaxTokens int
	// WebSearch offers Anthropic's web_search server tool (search.go).
	WebSearch bool
}

// New returns a Messages API client.
func New(cfg Config) (*provider.Client, error) {
	if cfg.MaxTokens < 0 {
		return nil, fmt.Errorf("max tokens must not be negative")
	}
	w := &wire{effort: cfg.Transport.Reasoning, maxTokens: cfg.MaxTokens, webSearch: cfg.WebSearch}
	t := cfg.Transport
	// The effort is this wire's thinking budget, not OpenRouter's
	// parameter; accounting is OpenRouter's too.
	if !provider.ValidReasoning(t.Reasoning) {
		return nil, fmt.Errorf("invalid reasoning effort %q: want off, low, medium or high", t.Reasoning)
	}
	t.Reasoning, t.UsageAccounting = "", false
	return provider.NewWire(t, w)
}

// IsEndpoint reports whether endpoint is Anthropic's own API.
func IsEndpoint(endpoint string) bool {
	u, err := url.Parse(endpoint)
	if err != nil {
		return false
	}
	h := u.Hostname()
	return h == "api.anthropic.com" || strings.HasSuffix(h, ".anthropic.com")
}

// wire implements provider.Wire.
type wire struct {
	effort    string
	maxTokens int
	webSearch bool
}

func (w *wire) URL(endpoint string) (*url.URL, error) {
	return provider.EndpointURL(endpoint, DefaultEndpoint, "messages")
}

func (w *wire) Header(h http.Header, apiKey string) {
	if apiKey != "" {
		h.Set("x-api-key", apiKey)
	}
	h.Set("anthropic-version", APIVersion)
}

func (w *wire) Encode(req provider.Request) ([]byte, error) {
	return encodeRequest(req, w.effort, w.maxTokens, w.webSearch)
}

func (w *wire) Decode(body io.Reader, apiKey string, onDelta func(provider.Delta)) (provider.Response, error) {
	return readStreamFull(body, apiKey, onDelta, w.webSearch)
}
