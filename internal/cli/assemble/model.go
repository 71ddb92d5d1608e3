package assemble

import (
	"os"

	"github.com/tiny-agent/tiny-go/internal/approval"
	"github.com/tiny-agent/tiny-go/internal/cli/modelwire"
	"github.com/tiny-agent/tiny-go/internal/store"
	"github.com/tiny-agent/tiny-go/internal/tools"
	"github.com/tiny-agent/tiny-go/internal/webfetch"
)

// The runner's side of the model choice (internal/cli/modelwire): what
// needs the session file or the permission state.

// DiscardConfigFailure removes a session this process created in which no
// model request succeeded and the last failed because of the settings,
// with its sidecar, as a failed start does, so neither a Resume line nor
// --continue points at it.
func (a *Runner) DiscardConfigFailure() bool {
	if !a.Created || !a.Wire.OnlyConfigFailures() || a.Store == nil {
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

// webFetchTools is web_fetch, judged by the permission rules, unless
// print mode's --tools or --disallowedTools left it out. A redirect to a
// host no rule allows is followed only where nobody is asked (auto and
// plan mode); elsewhere the model is told, and its fetch of the new URL
// is asked about.
func (a *Runner) webFetchTools() ([]tools.Tool, error) {
	if a.Flags.NoWebFetch {
		return nil, nil
	}
	o, err := modelwire.WebFetchOptions(a.IO.Getenv)
	if err != nil {
		return nil, err
	}
	if set := a.Guard.Rules(); set != nil {
		o.Rules = set
	}
	o.FollowUnlisted = func() bool {
		if a.Mode == nil {
			return a.Guard.Approval() == approval.Auto
		}
		m := a.Mode.Mode()
		return m == approval.Auto || m == approval.Plan
	}
	return []tools.Tool{webfetch.New(o).Tool()}, nil
}
