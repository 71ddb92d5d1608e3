package cli

import (
	"errors"
	"slices"

	"github.com/spf13/pflag"

	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/headless"
	"github.com/tiny-agent/tiny-go/internal/hooks"
	"github.com/tiny-agent/tiny-go/internal/tools"
)

// AddHooks adds the SDK's hook callbacks to the session's hooks runner,
// which a headless run always has (embedding.callbackHooks).
func (s *headlessSession) AddHooks(hs ...hooks.Hook) error {
	u := s.r.userHooks
	if u == nil || u.run == nil {
		return errors.New("this session has no hooks runner")
	}
	u.run.Add(hs...)
	return nil
}

// AddTools offers the tools of one of the SDK's in-process MCP servers
// from the next run on: the agent is rebuilt with them.
func (s *headlessSession) AddTools(alias string, ts []tools.Tool) error {
	cfg := s.Agent().Config()
	cfg.Tools = append(slices.Clip(cfg.Tools), ts...)
	ag, err := agent.New(cfg)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.r.agent = ag
	s.r.mcpAliases = append(s.r.mcpAliases, alias)
	s.mu.Unlock()
	return nil
}

// sdkMCPServers takes the SDK's in-process servers (type "sdk") from
// --mcp-config; it reports whether the flag is then fully used, so it
// is not named as ignored.
func sdkMCPServers(fl *pflag.FlagSet, opt *headless.Options) (bool, error) {
	configs, err := fl.GetStringArray("mcp-config")
	if err != nil || len(configs) == 0 {
		return false, nil
	}
	names, others, err := headless.SDKServersOf(configs)
	if err != nil {
		return false, usageError{err}
	}
	opt.SDKServers = names
	return len(names) > 0 && len(others) == 0, nil
}
