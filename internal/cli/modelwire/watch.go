package modelwire

import (
	"context"
	"sync/atomic"

	"github.com/tiny-agent/tiny-go/internal/provider"
)

// watch remembers whether a model request ever succeeded in this process
// and whether the last one failed for a reason only a change of settings
// fixes (a refused key, a wrong URL or model, no server). A new session
// whose every request failed so holds nothing worth resuming.
type watch struct {
	inner     provider.Provider
	succeeded atomic.Bool
	config    atomic.Bool
}

func (w *watch) Stream(ctx context.Context, req provider.Request, onDelta func(provider.Delta)) (provider.Response, error) {
	resp, err := w.inner.Stream(ctx, req, onDelta)
	if err == nil {
		w.succeeded.Store(true)
	}
	w.config.Store(err != nil && provider.IsConfigurationError(err))
	return resp, err
}

// Watch wraps client with retries (whose errors name the setting that
// chose the endpoint) and the watch; the result is the process's provider,
// the main agent's and its subagents'.
func (c *Choice) Watch(client *provider.Client) provider.Provider {
	c.watch = &watch{inner: provider.Retry(client, provider.RetryConfig{Endpoint: client.URL(), EndpointSource: c.endpointSource})}
	return c.watch
}

// Provider is the provider Watch made (nil before).
func (c *Choice) Provider() provider.Provider {
	if c.watch == nil {
		return nil
	}
	return c.watch
}

// OnlyConfigFailures reports that no model request succeeded in this
// process and the last failed because of the settings: a session created
// here has no turn to resume, only settings to fix.
func (c *Choice) OnlyConfigFailures() bool {
	return c != nil && c.watch != nil && !c.watch.succeeded.Load() && c.watch.config.Load()
}
