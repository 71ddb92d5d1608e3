// Package responses speaks OpenAI's Responses API (POST {endpoint}/responses)
// as a provider.Provider, over the provider package's transport, so
// timeouts, the size bound, retries and error classes are those of every
// other provider. It works with OpenAI and with servers that speak the same
// API (LM Studio, vLLM, OpenRouter).
//
// Requests are stateless (store: false): the whole conversation is sent
// every time, with the reasoning items the model returned (their
// encrypted_content included) sent back byte for byte. Those items travel
// as the reply's ReasoningDetails and are kept beside the session by
// internal/reasoning, like the reasoning_details of Chat Completions.
//
// OpenAI's native apply_patch and shell (local_shell) calls are mapped onto
// tiny-go's own write, edit and bash calls (see native.go), so the session
// records a named tool with JSON arguments, as for any other provider, and
// the effects run with the same approvals, checkpoints and sandbox. The
// native item itself is kept with the reasoning items, so its result goes
// back as apply_patch_call_output or shell_call_output.
//
// The wire types are declared here rather than taken from
// github.com/openai/openai-go/v3: tiny-go reads a hand-written SSE stream
// and splices raw items back byte for byte, which the SDK's union types
// would re-encode, and the SDK's size and retry policy are not the
// contract's.
package responses

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
	AdapterIdentity = "openai:responses:v1"
	RoutingPrefix   = "openai:"
	DefaultEndpoint = "https://api.openai.com/v1"
)

// Native says when OpenAI's native apply_patch and shell tools are offered.
type Native string

// Native settings (TINY_NATIVE_TOOLS, config key native_tools).
const (
	NativeAuto Native = "" // for the models trained on them
	NativeOn   Native = "on"
	NativeOff  Native = "off"
)

// ParseNative reads a native-tools setting: auto, on or off.
func ParseNative(s string) (Native, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "auto":
		return NativeAuto, nil
	case "on", "true", "1":
		return NativeOn, nil
	case "off", "false", "0":
		return NativeOff, nil
	}
	return "", fmt.Errorf("native tools must be auto, on or off, not %q", s)
}

// Config configures a client.
type Config struct {
	// Transport is the provider transport: Endpoint (the API base URL,
	// "/responses" is appended), APIKey (a bearer token), timeouts and
	// size bound. Its Reasoning is the reasoning effort.
	Transport provider.Config
	// Native says when the native tools are offered.
	Native Native
	// MaxOutputTokens bounds a reply (0: the model's own bound).
	MaxOutputTokens int
	// WebSearch offers OpenAI's web_search tool (search.go).
	WebSearch bool
}

// New returns a Responses API client.
func New(cfg Config) (*provider.Client, error) {
	if !provider.ValidReasoning(cfg.Transport.Reasoning) {
		return nil, fmt.Errorf("invalid reasoning effort %q: want off, low, medium or high", cfg.Transport.Reasoning)
	}
	w := &wire{effort: cfg.Transport.Reasoning, native: cfg.Native, maxOutput: cfg.MaxOutputTokens, webSearch: cfg.WebSearch}
	t := cfg.Transport
	t.Reasoning, t.UsageAccounting = "", false // this wire's own parameters
	return provider.NewWire(t, w)
}

// wire implements provider.Wire.
type wire struct {
	effort    string
	native    Native
	maxOutput int
	webSearch bool
	cache     itemCache
}

func (w *wire) URL(endpoint string) (*url.URL, error) {
	return provider.EndpointURL(endpoint, DefaultEndpoint, "responses")
}

func (w *wire) Header(h http.Header, apiKey string) {
	if apiKey != "" {
		h.Set("Authorization", "Bearer "+apiKey)
	}
}

func (w *wire) Encode(req provider.Request) ([]byte, error) {
	return encodeRequest(req, w.options(req.Model), &w.cache)
}

func (w *wire) Decode(body io.Reader, apiKey string, onDelta func(provider.Delta)) (provider.Response, error) {
	return readStream(body, apiKey, onDelta)
}

// options resolves what a request for model carries.
func (w *wire) options(model string) options {
	o := options{effort: w.effort, maxOutput: w.maxOutput, reasoningModel: reasoningModel(model), webSearch: w.webSearch}
	switch w.native {
	case NativeOn:
		o.native = true
	case NativeAuto:
		o.native = trainedOnNative(model)
	}
	o.localShell = o.native && strings.HasPrefix(bareModel(model), "codex-mini")
	return o
}

// bareModel drops an OpenRouter-style "openai/" prefix.
func bareModel(model string) string { return strings.TrimPrefix(model, "openai/") }

// trainedOnNative reports the models OpenAI trained on apply_patch and
// shell: GPT-5.1 and later, and the codex models.
func trainedOnNative(model string) bool {
	m := bareModel(model)
	return strings.Contains(m, "codex") || strings.HasPrefix(m, "gpt-5.")
}

// reasoningModel reports models that take the reasoning parameter.
func reasoningModel(model string) bool {
	m := bareModel(model)
	for _, p := range []string{"gpt-5", "o1", "o3", "o4", "codex"} {
		if strings.HasPrefix(m, p) {
			return true
		}
	}
	return false
}
