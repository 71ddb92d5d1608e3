package assemble

import (
	"context"
	"os"
	"sync/atomic"

	"github.com/tiny-agent/tiny-go/internal/provider"
	"github.com/tiny-agent/tiny-go/internal/store"
)

// configWatch remembers whether a model request ever succeeded in this
// process and whether the last one failed for a reason only a change of
// settings fixes (a refused key, a wrong URL or model, no server). A new
// session whose every request failed so holds nothing worth resuming.
type configWatch struct {
	inner     provider.Provider
	succeeded atomic.Bool
	config    atomic.Bool
}

func (w *configWatch) Stream(ctx context.Context, req provider.Request, onDelta func(provider.Delta)) (provider.Response, error) {
	resp, err := w.inner.Stream(ctx, req, onDelta)
	if err == nil {
		w.succeeded.Store(true)
	}
	w.config.Store(err != nil && provider.IsConfigurationError(err))
	return resp, err
}

// onlyConfigFailures reports a session this process created in which no
// model request succeeded and the last failed because of the settings:
// there is no turn to resume, only settings to fix.
func (a *Runner) onlyConfigFailures() bool {
	return a.Created && a.watch != nil && !a.watch.succeeded.Load() && a.watch.config.Load()
}

// discardConfigFailure removes such a session file and its sidecar, as a
// failed start does, so neither a Resume line nor --continue points at it.
func (a *Runner) DiscardConfigFailure() bool {
	if !a.onlyConfigFailures() || a.Store == nil {
		return false
	}
	path := a.Store.Path()
	_ = a.Store.Close()
	a.Store = nil
	if dir, err := store.SidecarDir(path, false); err == nil {
		_ = os.RemoveAll(dir)
	}
	_ = os.Remove(path)
	return true
}
