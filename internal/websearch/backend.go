// Package websearch is the web_search tool when the model's provider has
// no search of its own: a configured backend, a self-hosted SearXNG's JSON
// API or the Brave Search API, asked over HTTP, its results given to the
// model as title, URL and snippet, with the backend that found them named
// (docs/web.md).
package websearch

import (
	"context"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
)

// Result is one search hit.
type Result struct {
	Title   string
	URL     string
	Snippet string
}

// Backend answers a query with at most n results.
type Backend interface {
	// Name says where results come from, for the model and for /status
	// ("SearXNG at http://127.0.0.1:8888").
	Name() string
	Search(ctx context.Context, query string, n int) ([]Result, error)
}

// Bounds of one backend request.
const (
	maxBody = 4 << 20
	timeout = 20 * time.Second
)

// BraveEndpoint is the Brave Search API's web search.
const BraveEndpoint = "https://api.search.brave.com/res/v1/web/search"

// SearXNG is a SearXNG instance's JSON API (json must be among its
// settings' search.formats).
type SearXNG struct {
	BaseURL string // e.g. http://127.0.0.1:8888
	Client  *http.Client
}

// Name implements Backend.
func (s *SearXNG) Name() string { return "SearXNG at " + s.BaseURL }

// Search implements Backend.
func (s *SearXNG) Search(ctx context.Context, query string, n int) ([]Result, error) {
	u, err := url.Parse(strings.TrimRight(s.BaseURL, "/") + "/search")
	if err != nil {
		return nil, fmt.Errorf("the SearXNG URL %q is not a URL: %w", s.BaseURL, err)
	}
	u.RawQuery = url.Values{"q": {query}, "format": {"json"}}.Encode()
	var body struct {
		Results []struct {
			Title   string `json:"title"`
			URL     string `json:"url"`
			Content string `json:"content"`
		} `json:"results"`
	}
	if err := getJSON(ctx, s.Client, u.String(), nil, &body); err != nil {
		var se *statusError
		if errors.As(err, &se) && se.code == http.StatusForbidden {
			return nil, fmt.Errorf("%s refused the JSON format (HTTP 403): add json to search.formats in its settings.yml", s.Name())
		}
		return nil, fmt.Errorf("%s: %w", s.Name(), err)
	}
	var out []Result
	for _, r := range body.Results {
		if len(out) == n {
			break
		}
		out = append(out, Result{Title: r.Title, URL: r.URL, Snippet: r.Content})
	}
	return out, nil
}

// Brave is the Brave Search API; Key is the subscription token
// (BRAVE_API_KEY).
type Brave struct {
	Endpoint string // BraveEndpoint unless a test or a proxy says otherwise
	Key      string
	Client   *http.Client
}

// Name implements Backend.
func (b *Brave) Name() string {
	if b.Endpoint == "" || b.Endpoint == BraveEndpoint {
		return "the Brave Search API"
	}
	return "the Brave Search API at " + b.Endpoint
}

// Search implements Backend.
func (b *Brave) Search(ctx context.Context, query string, n int) ([]Result, error) {
	u, err := url.Parse(cmpOr(b.Endpoint, BraveEndpoint))
	if err != nil {
		return nil, fmt.Errorf("the Brave endpoint is not a URL: %w", err)
	}
	u.RawQuery = url.Values{"q": {query}, "count": {strconv.Itoa(min(n, 20))}}.Encode()
	var body struct {
		Web struct {
			Results []struct {
				Title       string `json:"title"`
				URL         string `json:"url"`
				Description string `json:"description"`
			} `json:"results"`
		} `json:"web"`
	}
	h := http.Header{"X-Subscription-Token": {b.Key}}
	if err := getJSON(ctx, b.Client, u.String(), h, &body); err != nil {
		var se *statusError
		if errors.As(err, &se) && (se.code == http.StatusUnauthorized || se.code == http.StatusForbidden) {
			return nil, fmt.Errorf("%s refused the key (HTTP %d): check BRAVE_API_KEY", b.Name(), se.code)
		}
		return nil, fmt.Errorf("%s: %w", b.Name(), err)
	}
	var out []Result
	for _, r := range body.Web.Results {
		if len(out) == n {
			break
		}
		// Brave marks the matched words with <strong>.
		out = append(out, Result{Title: stripTags(r.Title), URL: r.URL, Snippet: stripTags(r.Description)})
	}
	return out, nil
}

type statusError struct{ code int }

func (e *statusError) Error() string { return fmt.Sprintf("HTTP %d", e.code) }

// getJSON GETs u and decodes its JSON body into dst.
func getJSON(ctx context.Context, c *http.Client, u string, h http.Header, dst any) error {
	if c == nil {
		c = http.DefaultClient
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	for k, v := range h {
		req.Header[k] = v
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return fmt.Errorf("request failed: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return &statusError{resp.StatusCode}
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return fmt.Errorf("reading the answer: %w", err)
	}
	if len(data) > maxBody {
		return fmt.Errorf("the answer is larger than %d MB", maxBody>>20)
	}
	if err := json.Unmarshal(data, dst, json.RejectUnknownMembers(false)); err != nil {
		return fmt.Errorf("the answer is not the expected JSON: %w", err)
	}
	return nil
}

var tag = regexp.MustCompile(`<[^>]*>`)

func stripTags(s string) string { return html.UnescapeString(tag.ReplaceAllString(s, "")) }

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
