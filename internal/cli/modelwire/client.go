package modelwire

import (
	"context"
	"net/http"
	"time"

	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/provider"
	"github.com/tiny-agent/tiny-go/internal/provider/anthropic"
	"github.com/tiny-agent/tiny-go/internal/provider/responses"
)

// anthropicContextWindow is the window of the Claude models the Messages
// API serves (its model list does not say).
const anthropicContextWindow = 200000

// Timeouts bound each model request: IdleTimeout while nothing arrives,
// RequestTimeout as a whole (zero: the provider's defaults).
type Timeouts struct {
	IdleTimeout, RequestTimeout time.Duration
}

// NewClient builds the provider client of the chosen wire (httpClient nil:
// the default one) and notes its endpoint for display.
func (c *Choice) NewClient(httpClient *http.Client, t Timeouts) (*provider.Client, error) {
	cfg := provider.Config{
		Endpoint:        c.endpoint,
		APIKey:          c.Access.Key,
		KeyVariable:     c.Access.KeyVar,
		IdleTimeout:     t.IdleTimeout,
		RequestTimeout:  t.RequestTimeout,
		Reasoning:       c.wire.effort,
		UsageAccounting: provider.IsOpenRouter(c.endpoint),
		HTTPClient:      httpClient,
	}
	var client *provider.Client
	var err error
	switch {
	case c.wire.anthropic:
		client, err = anthropic.New(anthropic.Config{Transport: cfg, WebSearch: c.webSearch.Native})
	case c.wire.responses:
		cfg.UsageAccounting = false
		client, err = responses.New(responses.Config{Transport: cfg, Native: c.wire.native, WebSearch: c.webSearch.Native})
	default:
		cfg.WebPlugin = c.webSearch.Native // OpenRouter's web plugin
		client, err = provider.New(cfg)
	}
	if err != nil {
		return nil, err
	}
	c.EndpointShown = client.URL()
	return client, nil
}

// AutoCompact configures compaction: the window given (--context-window
// or TINY_CONTEXT_WINDOW), else looked up in the endpoint's model list the
// first time the agent needs it (once per process), else the agent's
// default.
func (c *Choice) AutoCompact(client *provider.Client, window int64, share float64) *agent.AutoCompact {
	ac := &agent.AutoCompact{ContextWindow: window, Share: share}
	if ac.ContextWindow == 0 {
		ac.Lookup = c.contextWindowLookup(client)
	}
	return ac
}

// contextWindowLookup finds the model's window the first time it is
// needed: from the endpoint's model list, or Claude's for Anthropic.
func (c *Choice) contextWindowLookup(client *provider.Client) func(context.Context) int64 {
	if c.wire.anthropic {
		return func(context.Context) int64 { return anthropicContextWindow }
	}
	model := c.Model
	responsesAPI := c.wire.responses
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
