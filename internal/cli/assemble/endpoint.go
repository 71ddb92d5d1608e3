package assemble

import (
	"net/url"
	"strings"
	"time"

	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/cli/cmdutil"
	"github.com/tiny-agent/tiny-go/internal/config"
	"github.com/tiny-agent/tiny-go/internal/provider"
)

// Key variables: OpenRouter's own, and the optional bearer token of any
// other OpenAI-compatible endpoint.
const (
	OpenRouterKeyVar = "OPENROUTER_API_KEY"
	endpointKeyVar   = "TINY_API_KEY"
)

// endpointAccess is who tiny-go talks to and with which credential.
type EndpointAccess struct {
	// name is the provider named in the session header, the banner and
	// `session show`: "openrouter", else the endpoint's host (with port).
	Name string
	// keyVar is the variable the key comes from; key its value ("" sends
	// no Authorization header).
	KeyVar, Key string
}

// resolveEndpoint applies the key rule: OpenRouter needs OPENROUTER_API_KEY;
// any other endpoint takes TINY_API_KEY when set and runs without a key
// otherwise (llama.cpp, Ollama, vLLM). The OpenRouter key is never sent to
// another host. ok is false when OpenRouter is asked for without its key.
func ResolveEndpoint(endpoint string, getenv func(string) string) (acc EndpointAccess, ok bool) {
	host := endpointHost(endpoint)
	if isOpenRouter(host) {
		acc = EndpointAccess{Name: providerName, KeyVar: OpenRouterKeyVar, Key: strings.TrimSpace(getenv(OpenRouterKeyVar))}
		return acc, acc.Key != ""
	}
	return EndpointAccess{Name: host, KeyVar: endpointKeyVar, Key: strings.TrimSpace(getenv(endpointKeyVar))}, true
}

// endpointSource names the setting that chose the endpoint, for errors
// that tell the user where to change it: a flag, TINY_ENDPOINT, a line of
// a settings file, or the default.
func endpointSource(io Stdio) string {
	switch src := io.SettingSource(config.Endpoint); src.Kind {
	case config.Flag, config.Env:
		return src.Name
	case config.User, config.Project:
		return "endpoint in " + src.String()
	}
	if strings.TrimSpace(io.Getenv("TINY_ENDPOINT")) != "" {
		return "TINY_ENDPOINT"
	}
	return "the default; set TINY_ENDPOINT or endpoint in .tiny-agent/config.toml to use another server"
}

// endpointHost is the host[:port] of an endpoint URL, or the URL itself
// when it does not parse (provider.New reports that).
func endpointHost(endpoint string) string {
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" {
		return endpoint
	}
	return strings.ToLower(u.Host)
}

func isOpenRouter(host string) bool {
	h := strings.TrimSuffix(host, ":443")
	return h == "openrouter.ai" || strings.HasSuffix(h, ".openrouter.ai")
}

// configureRequestTimeout applies TINY_REQUEST_TIMEOUT under the flag.
func (a *Runner) configureRequestTimeout() error {
	if a.Flags.RequestTimeout == 0 {
		if v := a.IO.Getenv("TINY_REQUEST_TIMEOUT"); v != "" {
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				return cmdutil.UsageErrorf("TINY_REQUEST_TIMEOUT must be a positive duration such as 10m")
			}
			a.Flags.RequestTimeout = d
		}
	}
	if a.Flags.RequestTimeout < 0 {
		return cmdutil.UsageErrorf("--request-timeout must be a positive duration such as 10m")
	}
	return nil
}

// autoCompact configures compaction: the window from --context-window or
// TINY_CONTEXT_WINDOW, else looked up in the endpoint's model list the
// first time the agent needs it (once per process), else the agent's
// default.
func (a *Runner) autoCompact(client *provider.Client) *agent.AutoCompact {
	ac := &agent.AutoCompact{ContextWindow: a.Flags.ContextWindow, Share: a.Flags.CompactShare}
	if ac.ContextWindow == 0 {
		ac.Lookup = a.contextWindowLookup(client)
	}
	return ac
}
