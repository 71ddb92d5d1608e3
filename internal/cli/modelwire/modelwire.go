// Package modelwire is the model and provider choice of one tiny-go
// process: which model, on which endpoint, with which key, over which
// wire (Chat Completions, the Responses API or Anthropic's Messages API),
// with which reasoning effort, and how web search is offered; the client
// that choice builds, and the watch that tells a session whose every
// request failed for its settings.
package modelwire

import (
	"strings"

	"github.com/spf13/pflag"

	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/cli/cmdutil"
	"github.com/tiny-agent/tiny-go/internal/config"
	"github.com/tiny-agent/tiny-go/internal/provider"
	"github.com/tiny-agent/tiny-go/internal/provider/anthropic"
	"github.com/tiny-agent/tiny-go/internal/provider/responses"
	"github.com/tiny-agent/tiny-go/internal/reasoning"
	"github.com/tiny-agent/tiny-go/internal/websearch"
)

// Defaults of cli.md.
const (
	DefaultModel    = "openai/gpt-5.6-luna"
	DefaultEndpoint = "https://openrouter.ai/api/v1"
	providerName    = "openrouter"
)

// Flags are the flags of the provider choice.
type Flags struct {
	reasoning string
}

func (f *Flags) Register(fl *pflag.FlagSet) {
	fl.StringVar(&f.reasoning, "reasoning", "", "reasoning effort: off, low, medium or high (default $TINY_REASONING, else the model's default)")
}

// Options are what the choice is made from.
type Options struct {
	// Getenv is the environment with the settings files' values.
	Getenv func(string) string
	Flags  Flags
	// Model is --model (else TINY_MODEL, else DefaultModel).
	Model string
	// NoWebSearch leaves web search out, native or not (print mode's
	// --tools or --disallowedTools).
	NoWebSearch bool
	// EndpointSource is where the endpoint setting came from, for errors
	// that tell the user where to change it.
	EndpointSource config.Source
}

// Choice is the model and provider of one process.
type Choice struct {
	// Model is the model id in use (/model changes it).
	Model string
	// Access is who tiny-go talks to and with which key.
	Access Access
	// EndpointShown is the endpoint without any password, for display
	// (set by NewClient).
	EndpointShown string

	endpoint       string
	endpointSource string
	wire           wire
	// webSearch is how web_search is offered (web.go).
	webSearch websearch.Choice
	// watch sees every model request (watch.go).
	watch *watch
}

// New resolves the model, the wire, the endpoint and its key, the
// reasoning effort and the web search choice.
func New(o Options) (*Choice, error) {
	c := &Choice{
		Model:          firstNonEmpty(o.Model, o.Getenv("TINY_MODEL"), DefaultModel),
		endpointSource: endpointSource(o.EndpointSource, o.Getenv),
	}
	if err := c.configureProvider(o); err != nil {
		return nil, err
	}
	if err := c.configureWebSearch(o); err != nil {
		return nil, err
	}
	return c, nil
}

// wire is the wire protocol of this process: OpenAI-compatible Chat
// Completions, or Anthropic's Messages API when TINY_PROVIDER=anthropic or
// the endpoint is Anthropic's.
type wire struct {
	anthropic bool
	// responses is OpenAI's Responses API (TINY_PROVIDER=openai-responses).
	responses bool
	native    responses.Native
	effort    string
}

// identity is the adapter identity recorded in configuration snapshots.
func (w wire) identity() agent.Identity {
	if w.anthropic {
		return agent.Identity{Adapter: anthropic.AdapterIdentity, RoutingPrefix: anthropic.RoutingPrefix}
	}
	if w.responses {
		return agent.Identity{Adapter: responses.AdapterIdentity, RoutingPrefix: responses.RoutingPrefix}
	}
	return agent.Identity{}
}

// chooseWire reads TINY_PROVIDER and the endpoint.
func chooseWire(getenv func(string) string) (wire, error) {
	var w wire
	switch p := strings.ToLower(strings.TrimSpace(getenv("TINY_PROVIDER"))); p {
	case "anthropic":
		w.anthropic = true
	case "openai-responses":
		w.responses = true
	case "", "openrouter", "openai":
		w.anthropic = anthropic.IsEndpoint(getenv("TINY_ENDPOINT"))
	default:
		return w, cmdutil.UsageErrorf("TINY_PROVIDER must be openrouter, openai, openai-responses or anthropic, not %q", p)
	}
	n, err := responses.ParseNative(getenv("TINY_NATIVE_TOOLS"))
	if err != nil {
		return w, cmdutil.UsageErrorf("TINY_NATIVE_TOOLS (or native_tools): %v", err)
	}
	w.native = n
	return w, nil
}

// configureProvider resolves the wire, the endpoint and its key, and the
// reasoning effort.
func (c *Choice) configureProvider(o Options) error {
	w, err := chooseWire(o.Getenv)
	if err != nil {
		return err
	}
	w.effort = strings.ToLower(firstNonEmpty(o.Flags.reasoning, o.Getenv("TINY_REASONING")))
	if !provider.ValidReasoning(w.effort) {
		return cmdutil.UsageErrorf("--reasoning (or TINY_REASONING) must be off, low, medium or high")
	}
	c.wire = w
	if w.responses {
		return c.configureResponses(o.Getenv)
	}
	if !w.anthropic {
		c.endpoint = firstNonEmpty(o.Getenv("TINY_ENDPOINT"), DefaultEndpoint)
		acc, ok := ResolveEndpoint(c.endpoint, o.Getenv)
		if !ok {
			return cmdutil.UsageErrorf("OPENROUTER_API_KEY is not set: export your OpenRouter key, or set TINY_ENDPOINT to another OpenAI-compatible server (its key, if it needs one, goes in TINY_API_KEY), or TINY_PROVIDER=anthropic with ANTHROPIC_API_KEY.")
		}
		c.Access = acc
		return nil
	}
	c.endpoint = firstNonEmpty(o.Getenv("TINY_ENDPOINT"), anthropic.DefaultEndpoint)
	c.Access = Access{Name: "anthropic", KeyVar: AnthropicKeyVar, Key: strings.TrimSpace(o.Getenv(AnthropicKeyVar))}
	if c.Access.Key == "" && anthropic.IsEndpoint(c.endpoint) {
		return cmdutil.UsageErrorf("ANTHROPIC_API_KEY is not set: export your Anthropic key to use TINY_PROVIDER=anthropic.")
	}
	return nil
}

// configureResponses resolves the endpoint and key of the Responses API:
// OpenAI's by default (OPENAI_API_KEY), or any server that speaks it (LM
// Studio, vLLM: TINY_API_KEY when it needs one; OpenRouter:
// OPENROUTER_API_KEY) at TINY_ENDPOINT. As for every provider, a key goes
// only to its own host.
func (c *Choice) configureResponses(getenv func(string) string) error {
	c.endpoint = firstNonEmpty(getenv("TINY_ENDPOINT"), responses.DefaultEndpoint)
	if !isOpenAI(c.endpoint) {
		acc, ok := ResolveEndpoint(c.endpoint, getenv)
		if !ok {
			return cmdutil.UsageErrorf("OPENROUTER_API_KEY is not set: export your OpenRouter key to use its Responses API.")
		}
		c.Access = acc
		return nil
	}
	c.Access = Access{Name: "openai", KeyVar: OpenaiKeyVar, Key: strings.TrimSpace(getenv(OpenaiKeyVar))}
	if c.Access.Key == "" {
		return cmdutil.UsageErrorf("OPENAI_API_KEY is not set: export your OpenAI key to use TINY_PROVIDER=openai-responses, or set TINY_ENDPOINT to another server that speaks the Responses API.")
	}
	return nil
}

// Identity is the adapter identity recorded in configuration snapshots.
func (c *Choice) Identity() agent.Identity { return c.wire.identity() }

// OpenReasoning opens the reasoning details beside the session file at
// sessionPath.
func (c *Choice) OpenReasoning(sessionPath string, fsync bool) (*reasoning.Store, error) {
	return reasoning.Open(sessionPath, c.wire.identity().Resolved().Adapter, c.Model, fsync)
}

// IdentityFromEnv is the identity a process started with this
// environment would record (for `session list`).
func IdentityFromEnv(getenv func(string) string) agent.Identity {
	w, err := chooseWire(getenv)
	if err != nil {
		return agent.Identity{}
	}
	return w.identity()
}

func firstNonEmpty(vs ...string) string {
	for _, v := range vs {
		if v = strings.TrimSpace(v); v != "" {
			return v
		}
	}
	return ""
}
