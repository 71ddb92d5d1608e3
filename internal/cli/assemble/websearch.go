package assemble

import (
	"strings"

	"github.com/tiny-agent/tiny-go/internal/cli/cmdutil"
	"github.com/tiny-agent/tiny-go/internal/provider"
	"github.com/tiny-agent/tiny-go/internal/provider/anthropic"
	"github.com/tiny-agent/tiny-go/internal/tools"
	"github.com/tiny-agent/tiny-go/internal/websearch"
)

// braveKeyVar holds the Brave Search API key; a secret like the model's.
const braveKeyVar = "BRAVE_API_KEY"

// configureWebSearch decides how web_search is offered (docs/web.md): the
// provider's own search, a configured backend, or not at all.
func (a *Runner) configureWebSearch() error {
	if a.Flags.NoWebSearch {
		a.webSearch = websearch.Choice{Status: "web_search: not offered (--tools or --disallowedTools leaves WebSearch out)"}
		return nil
	}
	getenv := a.IO.Getenv
	o := websearch.Options{
		Mode:          getenv("TINY_WEB_SEARCH"),
		Provider:      a.Access.Name,
		SearXNGURL:    getenv("TINY_SEARXNG_URL"),
		BraveKey:      getenv(braveKeyVar),
		BraveEndpoint: getenv("TINY_BRAVE_ENDPOINT"),
	}
	if o.Provider == "" {
		o.Provider = "the provider"
	}
	switch {
	case a.wire.anthropic:
		o.Native = "Anthropic's web_search server tool"
		// A server that only speaks the Messages API has no search.
		o.NativeByDefault = anthropic.IsEndpoint(a.endpoint)
	case a.wire.responses:
		o.Native = "OpenAI's web_search tool"
		o.NativeByDefault = isOpenAI(a.endpoint)
	case provider.IsOpenRouter(a.endpoint) || strings.EqualFold(strings.TrimSpace(o.Mode), websearch.ModeNative):
		// Asked for on another Chat Completions server, the plugin is
		// sent as OpenRouter spells it.
		o.Native = "OpenRouter's web plugin"
		o.NotByDefault = "OpenRouter's web plugin searches before every request and bills each search, so only web_search = native turns it on"
	}
	c, err := websearch.Choose(o)
	if err != nil {
		return cmdutil.UsageErrorf("%v", err)
	}
	a.webSearch = c
	return nil
}

// webSearchTools is the web_search tool when a backend answers it; the
// provider's own search is a server tool of the request instead.
func (a *Runner) webSearchTools() []tools.Tool {
	if a.webSearch.Backend == nil {
		return nil
	}
	return []tools.Tool{&websearch.Tool{Backend: a.webSearch.Backend}}
}

// webSearchStatus is /status's line.
func (a *Runner) WebSearchStatus() string {
	if a.webSearch.Status == "" {
		return "web_search: not offered"
	}
	return a.webSearch.Status
}
