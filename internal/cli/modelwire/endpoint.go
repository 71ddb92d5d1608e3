package modelwire

import (
	"net/url"
	"strings"
	"time"

	"github.com/tiny-agent/tiny-go/internal/cli/cmdutil"
	"github.com/tiny-agent/tiny-go/internal/config"
	"github.com/tiny-agent/tiny-go/internal/provider"
	"github.com/tiny-agent/tiny-go/internal/provider/responses"
)

// Key variables: OpenRouter's, Anthropic's and OpenAI's own, the optional
// bearer token of any other OpenAI-compatible endpoint, and the Brave
// Search key (a secret like the model's).
const (
	OpenRouterKeyVar = "OPENROUTER_API_KEY"
	AnthropicKeyVar  = "ANTHROPIC_API_KEY"
	OpenaiKeyVar     = "OPENAI_API_KEY"
	endpointKeyVar   = "TINY_API_KEY"
	braveKeyVar      = "BRAVE_API_KEY"
)

// SecretVars are the variables that hold the providers' and the search
// backend's keys, which commands never see.
func SecretVars() []string {
	return []string{OpenRouterKeyVar, endpointKeyVar, AnthropicKeyVar, OpenaiKeyVar, braveKeyVar}
}

// Access is who tiny-go talks to and with which credential.
type Access struct {
	// Name is the provider named in the session header, the banner and
	// `session show`: "openrouter", else the endpoint's host (with port).
	Name string
	// KeyVar is the variable the key comes from; Key its value ("" sends
	// no Authorization header).
	KeyVar, Key string
}

// ResolveEndpoint applies the key rule: OpenRouter needs OPENROUTER_API_KEY;
// any other endpoint takes TINY_API_KEY when set and runs without a key
// otherwise (llama.cpp, Ollama, vLLM). The OpenRouter key is never sent to
// another host. ok is false when OpenRouter is asked for without its key.
func ResolveEndpoint(endpoint string, getenv func(string) string) (acc Access, ok bool) {
	host := endpointHost(endpoint)
	if isOpenRouter(host) {
		acc = Access{Name: providerName, KeyVar: OpenRouterKeyVar, Key: strings.TrimSpace(getenv(OpenRouterKeyVar))}
		return acc, acc.Key != ""
	}
	return Access{Name: host, KeyVar: endpointKeyVar, Key: strings.TrimSpace(getenv(endpointKeyVar))}, true
}

// endpointSource names the setting that chose the endpoint, for errors
// that tell the user where to change it: a flag, TINY_ENDPOINT, a line of
// a settings file, or the default.
func endpointSource(src config.Source, getenv func(string) string) string {
	switch src.Kind {
	case config.Flag, config.Env:
		return src.Name
	case config.User, config.Project:
		return "endpoint in " + src.String()
	}
	if strings.TrimSpace(getenv("TINY_ENDPOINT")) != "" {
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

// isOpenAI reports whether endpoint is OpenAI's own API.
func isOpenAI(endpoint string) bool {
	u, err := provider.EndpointURL(endpoint, responses.DefaultEndpoint)
	return err == nil && (u.Hostname() == "api.openai.com" || strings.HasSuffix(u.Hostname(), ".openai.com"))
}

// RequestTimeout is --request-timeout (flag), else TINY_REQUEST_TIMEOUT.
func RequestTimeout(flag time.Duration, getenv func(string) string) (time.Duration, error) {
	if flag == 0 {
		if v := getenv("TINY_REQUEST_TIMEOUT"); v != "" {
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				return flag, cmdutil.UsageErrorf("TINY_REQUEST_TIMEOUT must be a positive duration such as 10m")
			}
			flag = d
		}
	}
	if flag < 0 {
		return flag, cmdutil.UsageErrorf("--request-timeout must be a positive duration such as 10m")
	}
	return flag, nil
}
