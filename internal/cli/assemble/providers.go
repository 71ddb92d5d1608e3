package assemble

import (
	"context"
	"net/http"
	"strings"

	"github.com/spf13/pflag"

	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/cli/cmdutil"
	"github.com/tiny-agent/tiny-go/internal/provider"
	"github.com/tiny-agent/tiny-go/internal/provider/anthropic"
	"github.com/tiny-agent/tiny-go/internal/provider/responses"
	"github.com/tiny-agent/tiny-go/internal/reasoning"
)

// anthropicKeyVar holds the key of Anthropic's own API.
const AnthropicKeyVar = "ANTHROPIC_API_KEY"

// anthropicContextWindow is the window of the Claude models the Messages
// API serves (its model list does not say).
const anthropicContextWindow = 200000

// ProviderFlags are the flags of the provider choice.
type ProviderFlags struct {
	reasoning string
}

func (f *ProviderFlags) Register(fl *pflag.FlagSet) {
	fl.StringVar(&f.reasoning, "reasoning", "", "reasoning effort: off, low, medium or high (default $TINY_REASONING, else the model's default)")
}

// wireChoice is the wire protocol of this process: OpenAI-compatible Chat
// Completions, or Anthropic's Messages API when TINY_PROVIDER=anthropic or
// the endpoint is Anthropic's.
type wireChoice struct {
	anthropic bool
	// responses is OpenAI's Responses API (TINY_PROVIDER=openai-responses).
	responses bool
	native    responses.Native
	effort    string
}

// identity is the adapter identity recorded in configuration snapshots.
func (w wireChoice) identity() agent.Identity {
	if w.anthropic {
		return agent.Identity{Adapter: anthropic.AdapterIdentity, RoutingPrefix: anthropic.RoutingPrefix}
	}
	if w.responses {
		return agent.Identity{Adapter: responses.AdapterIdentity, RoutingPrefix: responses.RoutingPrefix}
	}
	return agent.Identity{}
}

// chooseWire reads TINY_PROVIDER and the endpoint.
func chooseWire(getenv func(string) string) (wireChoice, error) {
	var w wireChoice
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
func (a *Runner) ConfigureProvider() error {
	w, err := chooseWire(a.IO.Getenv)
	if err != nil {
		return err
	}
	w.effort = strings.ToLower(FirstNonEmpty(a.Flags.ProviderFlags.reasoning, a.IO.Getenv("TINY_REASONING")))
	if !provider.ValidReasoning(w.effort) {
		return cmdutil.UsageErrorf("--reasoning (or TINY_REASONING) must be off, low, medium or high")
	}
	a.wire = w
	if w.responses {
		return a.configureResponses()
	}
	if !w.anthropic {
		a.endpoint = FirstNonEmpty(a.IO.Getenv("TINY_ENDPOINT"), DefaultEndpoint)
		acc, ok := ResolveEndpoint(a.endpoint, a.IO.Getenv)
		if !ok {
			return cmdutil.UsageErrorf("OPENROUTER_API_KEY is not set: export your OpenRouter key, or set TINY_ENDPOINT to another OpenAI-compatible server (its key, if it needs one, goes in TINY_API_KEY), or TINY_PROVIDER=anthropic with ANTHROPIC_API_KEY.")
		}
		a.Access = acc
		return nil
	}
	a.endpoint = FirstNonEmpty(a.IO.Getenv("TINY_ENDPOINT"), anthropic.DefaultEndpoint)
	a.Access = EndpointAccess{Name: "anthropic", KeyVar: AnthropicKeyVar, Key: strings.TrimSpace(a.IO.Getenv(AnthropicKeyVar))}
	if a.Access.Key == "" && anthropic.IsEndpoint(a.endpoint) {
		return cmdutil.UsageErrorf("ANTHROPIC_API_KEY is not set: export your Anthropic key to use TINY_PROVIDER=anthropic.")
	}
	return nil
}

// newClient builds the provider client of the chosen wire.
func (a *Runner) newClient(httpClient *http.Client) (*provider.Client, error) {
	cfg := provider.Config{
		Endpoint:        a.endpoint,
		APIKey:          a.Access.Key,
		KeyVariable:     a.Access.KeyVar,
		IdleTimeout:     a.Flags.IdleTimeout,
		RequestTimeout:  a.Flags.RequestTimeout,
		Reasoning:       a.wire.effort,
		UsageAccounting: provider.IsOpenRouter(a.endpoint),
		HTTPClient:      httpClient,
	}
	if a.wire.anthropic {
		return anthropic.New(anthropic.Config{Transport: cfg, WebSearch: a.webSearch.Native})
	}
	if a.wire.responses {
		cfg.UsageAccounting = false
		return responses.New(responses.Config{Transport: cfg, Native: a.wire.native, WebSearch: a.webSearch.Native})
	}
	cfg.WebPlugin = a.webSearch.Native // OpenRouter's web plugin
	return provider.New(cfg)
}

// configureResponses resolves the endpoint and key of the Responses API:
// OpenAI's by default (OPENAI_API_KEY), or any server that speaks it (LM
// Studio, vLLM: TINY_API_KEY when it needs one; OpenRouter:
// OPENROUTER_API_KEY) at TINY_ENDPOINT. As for every provider, a key goes
// only to its own host.
func (a *Runner) configureResponses() error {
	a.endpoint = FirstNonEmpty(a.IO.Getenv("TINY_ENDPOINT"), responses.DefaultEndpoint)
	if !isOpenAI(a.endpoint) {
		acc, ok := ResolveEndpoint(a.endpoint, a.IO.Getenv)
		if !ok {
			return cmdutil.UsageErrorf("OPENROUTER_API_KEY is not set: export your OpenRouter key to use its Responses API.")
		}
		a.Access = acc
		return nil
	}
	a.Access = EndpointAccess{Name: "openai", KeyVar: OpenaiKeyVar, Key: strings.TrimSpace(a.IO.Getenv(OpenaiKeyVar))}
	if a.Access.Key == "" {
		return cmdutil.UsageErrorf("OPENAI_API_KEY is not set: export your OpenAI key to use TINY_PROVIDER=openai-responses, or set TINY_ENDPOINT to another server that speaks the Responses API.")
	}
	return nil
}

// openaiKeyVar holds the key of OpenAI's own API.
const OpenaiKeyVar = "OPENAI_API_KEY"

// isOpenAI reports whether endpoint is OpenAI's own API.
func isOpenAI(endpoint string) bool {
	u, err := provider.EndpointURL(endpoint, responses.DefaultEndpoint)
	return err == nil && (u.Hostname() == "api.openai.com" || strings.HasSuffix(u.Hostname(), ".openai.com"))
}

// contextWindowLookup finds the model's window the first time it is
// needed: from the endpoint's model list, or Claude's for Anthropic.
func (a *Runner) contextWindowLookup(client *provider.Client) func(context.Context) int64 {
	if a.wire.anthropic {
		return func(context.Context) int64 { return anthropicContextWindow }
	}
	model := a.Model
	responsesAPI := a.wire.responses
	return func(ctx context.Context) int64 {
		n, err := client.ContextWindow(ctx, model)
		if err != nil && responsesAPI {
			return responses.ContextWindow(model) // OpenAI's list gives none
		}
		if err != nil {
			return 0
		}
		return n
	}
}

// openReasoning opens the reasoning details beside the session.
func (a *Runner) OpenReasoning() (*reasoning.Store, error) {
	return reasoning.Open(a.Store.Path(), a.wire.identity().Resolved().Adapter, a.Model, a.Flags.Fsync)
}

// identityFromEnv is the identity a process started with this
// environment would record (for `session list`).
func IdentityFromEnv(getenv func(string) string) agent.Identity {
	w, err := chooseWire(getenv)
	if err != nil {
		return agent.Identity{}
	}
	return w.identity()
}
