package modelwire

import (
	"strconv"
	"strings"
	"time"

	"github.com/tiny-agent/tiny-go/internal/cli/cmdutil"
	"github.com/tiny-agent/tiny-go/internal/config"
	"github.com/tiny-agent/tiny-go/internal/provider"
	"github.com/tiny-agent/tiny-go/internal/provider/anthropic"
	"github.com/tiny-agent/tiny-go/internal/tools"
	"github.com/tiny-agent/tiny-go/internal/webfetch"
	"github.com/tiny-agent/tiny-go/internal/websearch"
)

// configureWebSearch decides how web_search is offered (docs/web.md): the
// provider's own search, a configured backend, or not at all.
func (c *Choice) configureWebSearch(opt Options) error {
	if opt.NoWebSearch {
		c.webSearch = websearch.Choice{Status: "web_search: not offered (--tools or --disallowedTools leaves WebSearch out)"}
		return nil
	}
	getenv := opt.Getenv
	o := websearch.Options{
		Mode:          getenv("TINY_WEB_SEARCH"),
		Provider:      c.Access.Name,
		SearXNGURL:    getenv("TINY_SEARXNG_URL"),
		BraveKey:      getenv(braveKeyVar),
		BraveEndpoint: getenv("TINY_BRAVE_ENDPOINT"),
	}
	if o.Provider == "" {
		o.Provider = "the provider"
	}
	switch {
	case c.wire.anthropic:
		o.Native = "Anthropic's web_search server tool"
		// A server that only speaks the Messages API has no search.
		o.NativeByDefault = anthropic.IsEndpoint(c.endpoint)
	case c.wire.responses:
		o.Native = "OpenAI's web_search tool"
		o.NativeByDefault = isOpenAI(c.endpoint)
	case provider.IsOpenRouter(c.endpoint) || strings.EqualFold(strings.TrimSpace(o.Mode), websearch.ModeNative):
		// Asked for on another Chat Completions server, the plugin is
		// sent as OpenRouter spells it.
		o.Native = "OpenRouter's web plugin"
		o.NotByDefault = "OpenRouter's web plugin searches before every request and bills each search, so only web_search = native turns it on"
	}
	w, err := websearch.Choose(o)
	if err != nil {
		return cmdutil.UsageErrorf("%v", err)
	}
	c.webSearch = w
	return nil
}

// WebSearchTools is the web_search tool when a backend answers it; the
// provider's own search is a server tool of the request instead.
func (c *Choice) WebSearchTools() []tools.Tool {
	if c.webSearch.Backend == nil {
		return nil
	}
	return []tools.Tool{&websearch.Tool{Backend: c.webSearch.Backend}}
}

// WebSearchStatus is /status's line.
func (c *Choice) WebSearchStatus() string {
	if c == nil || c.webSearch.Status == "" {
		return "web_search: not offered"
	}
	return c.webSearch.Status
}

// WebFetchOptions are web_fetch's limits from web_fetch_max_bytes and
// web_fetch_timeout (or their variables).
func WebFetchOptions(getenv func(string) string) (webfetch.Options, error) {
	var o webfetch.Options
	if v := getenv(config.EnvVar(config.WebFetchMaxBytes)); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			return o, cmdutil.UsageErrorf("%s must be a positive number of bytes, such as 10485760", config.EnvVar(config.WebFetchMaxBytes))
		}
		o.MaxBytes = n
	}
	if v := getenv(config.EnvVar(config.WebFetchTimeout)); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return o, cmdutil.UsageErrorf("%s must be a positive duration such as 30s", config.EnvVar(config.WebFetchTimeout))
		}
		o.Timeout = d
	}
	return o, nil
}

// DefaultWebFetchTools is web_fetch as a default run offers it (the
// configuration `session list` compares with).
func DefaultWebFetchTools() []tools.Tool {
	return []tools.Tool{webfetch.New(webfetch.Options{}).Tool()}
}
