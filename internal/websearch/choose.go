package websearch

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// Modes of the web_search setting.
const (
	ModeAuto    = "auto"
	ModeNative  = "native"
	ModeSearXNG = "searxng"
	ModeBrave   = "brave"
	ModeOff     = "off"
)

// Options are what decides how web_search is offered.
type Options struct {
	Mode string // one of the modes; "" is auto
	// Native names the provider's own search when its wire has one
	// ("Anthropic's web_search server tool"), else "".
	Native string
	// NativeByDefault is true when auto should use Native: the endpoint
	// is the provider's own (a local server speaking its API has no
	// search) and the search is the model's choice, not run on every
	// request.
	NativeByDefault bool
	// NotByDefault says why auto does not use Native, for the status
	// line (default: only on the provider's own endpoint).
	NotByDefault string
	// Provider names the provider for the reason given when there is no
	// search ("OpenRouter").
	Provider      string
	SearXNGURL    string
	BraveKey      string
	BraveEndpoint string
	Client        *http.Client
}

// Choice is how web_search is offered.
type Choice struct {
	// Native is true when the provider searches (Backend is nil).
	Native bool
	// Backend answers the web_search tool; nil when the tool is not
	// offered or the search is native.
	Backend Backend
	// Status is one line for /status and tiny-go config.
	Status string
}

// Choose decides; an error is a setting that cannot work, said in one line
// with what to do.
func Choose(o Options) (Choice, error) {
	mode := strings.ToLower(strings.TrimSpace(o.Mode))
	searx := func() (Choice, error) {
		u, err := url.Parse(o.SearXNGURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return Choice{}, fmt.Errorf("searxng_url (TINY_SEARXNG_URL) must be an http(s) URL such as http://127.0.0.1:8888, not %q", o.SearXNGURL)
		}
		b := &SearXNG{BaseURL: strings.TrimRight(o.SearXNGURL, "/"), Client: o.Client}
		return Choice{Backend: b, Status: "web_search: " + b.Name()}, nil
	}
	brave := func() Choice {
		b := &Brave{Endpoint: o.BraveEndpoint, Key: o.BraveKey, Client: o.Client}
		return Choice{Backend: b, Status: "web_search: " + b.Name() + " (key from BRAVE_API_KEY)"}
	}
	native := func() Choice {
		return Choice{Native: true, Status: "web_search: " + o.Native + " (the provider's own search)"}
	}
	switch mode {
	case ModeOff:
		return Choice{Status: "web_search: not offered (web_search = off)"}, nil
	case ModeNative:
		if o.Native == "" {
			return Choice{}, fmt.Errorf("web_search = native, but %s has no native search here: use searxng or brave", o.Provider)
		}
		return native(), nil
	case ModeSearXNG:
		if o.SearXNGURL == "" {
			return Choice{}, fmt.Errorf("web_search = searxng needs searxng_url (or TINY_SEARXNG_URL), the base URL of a SearXNG with the json format on")
		}
		return searx()
	case ModeBrave:
		if o.BraveKey == "" {
			return Choice{}, fmt.Errorf("web_search = brave needs BRAVE_API_KEY: export your Brave Search API key")
		}
		return brave(), nil
	case "", ModeAuto:
	default:
		return Choice{}, fmt.Errorf("web_search must be auto, native, searxng, brave or off, not %q", o.Mode)
	}
	switch {
	case o.Native != "" && o.NativeByDefault:
		return native(), nil
	case o.SearXNGURL != "":
		return searx()
	case o.BraveKey != "":
		return brave(), nil
	}
	why := o.Provider + " has no native search here"
	if o.Native != "" {
		why = o.Native + " is only used by default on the provider's own endpoint (web_search = native turns it on)"
		if o.NotByDefault != "" {
			why = o.NotByDefault
		}
	}
	return Choice{Status: "web_search: not offered: " + why + ", and no search backend is configured (set searxng_url or BRAVE_API_KEY)"}, nil
}
