package assemble

import (
	"strconv"
	"time"

	"github.com/tiny-agent/tiny-go/internal/approval"
	"github.com/tiny-agent/tiny-go/internal/cli/cmdutil"
	"github.com/tiny-agent/tiny-go/internal/config"
	"github.com/tiny-agent/tiny-go/internal/tools"
	"github.com/tiny-agent/tiny-go/internal/webfetch"
)

// webFetchOptions are web_fetch's limits from web_fetch_max_bytes and
// web_fetch_timeout (or their variables).
func webFetchOptions(getenv func(string) string) (webfetch.Options, error) {
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

// webFetchTools is web_fetch, judged by the permission rules, unless
// print mode's --tools or --disallowedTools left it out. A redirect to a
// host no rule allows is followed only where nobody is asked (auto and
// plan mode); elsewhere the model is told, and its fetch of the new URL
// is asked about.
func (a *Runner) webFetchTools() ([]tools.Tool, error) {
	if a.Flags.NoWebFetch {
		return nil, nil
	}
	o, err := webFetchOptions(a.IO.Getenv)
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

// defaultWebFetchTools is web_fetch as a default run offers it (the
// configuration `session list` compares with).
func DefaultWebFetchTools() []tools.Tool {
	return []tools.Tool{webfetch.New(webfetch.Options{}).Tool()}
}
