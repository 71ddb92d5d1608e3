package headlesscmd

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/cli/cmdutil"
	"github.com/tiny-agent/tiny-go/internal/fork"
	"github.com/tiny-agent/tiny-go/internal/headless"
	"github.com/tiny-agent/tiny-go/internal/hooks"
	"github.com/tiny-agent/tiny-go/internal/store"
	"github.com/tiny-agent/tiny-go/internal/tools"
)

// AddHooks adds the SDK's hook callbacks to the session's hooks runner,
// which a headless run always has (embedding.callbackHooks).
func (s *headlessSession) AddHooks(hs ...hooks.Hook) error {
	r := s.r.UserHooks.Runner()
	if r == nil {
		return errors.New("this session has no hooks runner")
	}
	r.Add(hs...)
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
	s.r.Agent = ag
	s.r.MCPAliases = append(s.r.MCPAliases, alias)
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
		return false, cmdutil.UsageError{Err: err}
	}
	opt.SDKServers = names
	return len(names) > 0 && len(others) == 0, nil
}

// maxBudget takes --max-budget-usd (the last one given).
func maxBudget(fl *pflag.FlagSet, opt *headless.Options) (bool, error) {
	vs, err := fl.GetStringArray("max-budget-usd")
	if err != nil || len(vs) == 0 {
		return false, nil
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(vs[len(vs)-1]), 64)
	if err != nil || v <= 0 || math.IsInf(v, 0) {
		return false, cmdutil.UsageErrorf("--max-budget-usd must be a positive number of dollars, not %q", vs[len(vs)-1])
	}
	opt.MaxBudgetUSD = v
	return true, nil
}

// sdkFlags reads the SDK's flags that tiny-go honours although they are
// declared with the ignored ones (--mcp-config's SDK servers,
// --max-budget-usd) and returns those fully used, which are then not
// named as ignored.
func sdkFlags(fl *pflag.FlagSet, opt *headless.Options) ([]string, error) {
	var used []string
	all, err := sdkMCPServers(fl, opt)
	if err != nil {
		return nil, err
	}
	if all {
		used = append(used, "mcp-config")
	}
	budget, err := maxBudget(fl, opt)
	if err != nil {
		return nil, err
	}
	if budget {
		used = append(used, "max-budget-usd")
	}
	if v, err := fl.GetBool("allow-dangerously-skip-permissions"); err == nil && v && fl.Lookup("allow-dangerously-skip-permissions").Usage == ignoredUsage {
		opt.AllowBypass = true
		used = append(used, "allow-dangerously-skip-permissions")
	}
	if forkAsked(fl) {
		used = append(used, "fork-session") // done by forkSession, or refused
	}
	for name := range refusedSDKFlags {
		if fl.Changed(name) && fl.Lookup(name).Usage == ignoredUsage {
			used = append(used, name) // refused by resumeOrFork
		}
	}
	return used, nil
}

func forkAsked(fl *pflag.FlagSet) bool {
	v, err := fl.GetBool("fork-session")
	return err == nil && v && fl.Lookup("fork-session").Usage == ignoredUsage
}

// refusedSDKFlags are SDK options tiny-go cannot honour and whose
// absence would change what the host gets: refused as an error result,
// which the SDK raises, rather than named on stderr.
var refusedSDKFlags = map[string]string{
	"json-schema": "tiny-go does not support structured output (--json-schema, output_format / outputFormat); run without it",
	"session-id":  "tiny-go chooses its session ids (--session-id, session_id / sessionId); run without it and read session_id from the messages",
}

// resumeOrFork refuses the SDK options tiny-go cannot honour, then
// checks the session --resume names: one that does not exist is an error
// result (and exit 1), which the SDK raises, as Claude Code's "No
// conversation found" is; then --fork-session forks it.
func resumeOrFork(fl *pflag.FlagSet, r *runner, d *headless.Driver) error {
	for _, name := range slices.Sorted(maps.Keys(refusedSDKFlags)) {
		if fl.Changed(name) && fl.Lookup(name).Usage == ignoredUsage {
			return cmdutil.ExitError{Code: d.Refuse(refusedSDKFlags[name])}
		}
	}
	if r.Flags.Session == "" {
		if forkAsked(fl) {
			return cmdutil.UsageErrorf("--fork-session needs --resume ID (the session to fork)")
		}
		return nil
	}
	path, err := store.PathByID(r.Cwd, r.Flags.Session)
	if err != nil {
		return cmdutil.ExitError{Code: d.Refuse(fmt.Sprintf("No conversation found with session ID: %s (in %s)", r.Flags.Session, r.Cwd))}
	}
	if forkAsked(fl) {
		return forkSession(r, path)
	}
	return nil
}

// forkSession is --fork-session (fork_session, forkSession): the resumed
// session is forked whole (internal/fork: its committed facts under a new
// id, the source only read) and the fork is the one that runs, so the
// SDK gets a new session id and the original stays as it was.
func forkSession(r *runner, path string) error {
	res, err := fork.Write(path, -1, "", 0, time.Now())
	if err != nil {
		return fmt.Errorf("--fork-session: %w", err)
	}
	r.Flags.Session = res.ID
	return nil
}
