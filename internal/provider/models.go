package provider

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
)

// ModelsTimeout bounds the model-list lookup: it only refines a default.
const ModelsTimeout = 5 * time.Second

// maxModelsBody bounds the model list (OpenRouter's is a few hundred KiB).
const maxModelsBody = 8 << 20

// ErrModelUnknown is returned when the model list does not name the model
// or gives it no context length.
var ErrModelUnknown = errors.New("the endpoint's model list gives no context length for this model")

// ContextWindow asks the endpoint's model list (GET <endpoint>/models) for
// model's context length in tokens: `context_length` (OpenRouter and
// others), else vLLM's `max_model_len`. It takes at most ModelsTimeout.
func (c *Client) ContextWindow(ctx context.Context, model string) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, ModelsTimeout)
	defer cancel()
	u := *c.url
	u.Path = strings.TrimSuffix(u.Path, "/chat/completions") + "/models"
	u.RawPath = ""
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return 0, fmt.Errorf("model list: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "tiny-go")
	if c.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.apiKey)
	}
	for k, vs := range c.header {
		req.Header[http.CanonicalHeaderKey(k)] = vs
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, fmt.Errorf("model list: %s", sanitize(err.Error(), c.apiKey, maxSummary))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("model list: HTTP %d", resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxModelsBody))
	if err != nil {
		return 0, fmt.Errorf("model list: %s", sanitize(err.Error(), c.apiKey, maxSummary))
	}
	return contextLength(body, model)
}

// contextLength finds model in an OpenAI-style model list body.
func contextLength(body []byte, model string) (int64, error) {
	var list struct {
		Data []struct {
			ID            string `json:"id"`
			ContextLength int64  `json:"context_length"`
			MaxModelLen   int64  `json:"max_model_len"`
			TopProvider   struct {
				ContextLength int64 `json:"context_length"`
			} `json:"top_provider"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		return 0, errors.New("model list: not an OpenAI-style model list")
	}
	for _, m := range list.Data {
		if m.ID != model {
			continue
		}
		for _, n := range []int64{m.ContextLength, m.TopProvider.ContextLength, m.MaxModelLen} {
			if n > 0 {
				return n, nil
			}
		}
	}
	return 0, ErrModelUnknown
}
