package provider

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
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
	body, err := c.modelList(ctx)
	if err != nil {
		return 0, err
	}
	return contextLength(body, model)
}

// modelList is the body of GET <endpoint>/models, within ModelsTimeout.
func (c *Client) modelList(ctx context.Context) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, ModelsTimeout)
	defer cancel()
	u := *c.url
	u.Path = strings.TrimSuffix(strings.TrimSuffix(u.Path, "/chat/completions"), "/responses") + "/models"
	u.RawPath = ""
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("model list: %w", err)
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
		return nil, fmt.Errorf("model list: %s", sanitize(err.Error(), c.apiKey, maxSummary))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("model list: HTTP %d", resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxModelsBody))
	if err != nil {
		return nil, fmt.Errorf("model list: %s", sanitize(err.Error(), c.apiKey, maxSummary))
	}
	return body, nil
}

// notFoundHint completes an HTTP 404 of the chat endpoint with what a user
// needs to fix it: the URL, the model, and whether the endpoint's model
// list knows that model (a wrong model id and a wrong endpoint path both
// end in 404).
func (c *Client) notFoundHint(ctx context.Context, e *Error, model string) {
	e.Message += fmt.Sprintf(" (POST %s, model %q", c.URL(), model)
	if c.wire != nil {
		e.Message += ")"
		return
	}
	body, err := c.modelList(ctx)
	var ids []string
	if err == nil {
		ids, err = modelIDs(body)
	}
	switch {
	case err != nil:
		e.Message += "; the endpoint's model list could not be read: " + strings.TrimPrefix(err.Error(), "model list: ") + ": check the endpoint URL)"
	case slices.Contains(ids, model):
		e.Message += "; the endpoint's model list knows this model: check the endpoint URL)"
	default:
		e.Message += fmt.Sprintf("; the endpoint's model list (%d models) does not know this model: check --model or TINY_MODEL)", len(ids))
	}
}

// modelIDs lists the ids of an OpenAI-style model list body.
func modelIDs(body []byte) ([]string, error) {
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, errors.New("model list: not an OpenAI-style model list")
	}
	ids := make([]string, len(list.Data))
	for i, m := range list.Data {
		ids[i] = m.ID
	}
	return ids, nil
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
