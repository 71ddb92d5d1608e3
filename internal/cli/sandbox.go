package cli

import (
	"fmt"
	"runtime"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/tiny-agent/tiny-go/internal/cli/cmdutil"
	"github.com/tiny-agent/tiny-go/internal/sandbox"
	"github.com/tiny-agent/tiny-go/internal/secrets"
)

// sandboxFlags are --sandbox, --writable and --network (tools.md,
// "Sandbox").
type sandboxFlags struct {
	mode     string
	writable []string
	network  string
}

func addSandboxFlags(fl *pflag.FlagSet, f *sandboxFlags) {
	fl.StringVar(&f.mode, "sandbox", string(sandbox.Workspace), "where bash, bg, write and edit may write: workspace (the working directory, the temporary and cache directories, each --writable), read-only (the temporary directory only) or off")
	fl.StringArrayVar(&f.writable, "writable", nil, "another directory the sandbox lets commands and the file tools write to (repeatable)")
	fl.StringVar(&f.network, "network", "on", "on, off (commands may not bind or connect TCP; Landlock ABI 4 or later) or rules (commands reach only the domains WebFetch(domain:…) rules allow, through tiny-go's proxy)")
}

// newSandbox validates the sandbox flags and prepares the sandbox of cwd,
// printing its warning line, if any, to stderr.
func (a *runner) newSandbox() error {
	f := a.flags.sandbox
	mode, err := sandbox.ParseMode(f.mode)
	if err != nil {
		return usageError{Err: err}
	}
	if f.network != "on" && f.network != "off" && f.network != "rules" {
		return usageErrorf("--network must be on, off or rules, not %q", f.network)
	}
	if mode != sandbox.Workspace && len(f.writable) > 0 {
		return usageErrorf("--writable needs --sandbox workspace")
	}
	p := sandbox.Policy{
		Mode:       mode,
		WorkDir:    a.cwd,
		Writable:   append(append([]string(nil), f.writable...), a.additionalDirectories()...),
		NetworkOff: f.network == "off",
		Getenv:     a.io.getenv,
		Hidden:     a.hiddenPaths(),
	}
	if f.network == "rules" {
		p.NetworkRules = a.networkProxy()
	}
	sb, warning, err := sandbox.New(p)
	if err != nil {
		return usageError{Err: err}
	}
	if warning != "" {
		fmt.Fprintln(a.io.stderr, warning)
	}
	if line := sandbox.PlatformLine(runtime.GOOS, sb.Confined()); line != "" {
		fmt.Fprintln(a.io.stderr, line)
	}
	a.sandbox = sb
	a.warnUnhidden()
	return nil
}

// scrubber masks the values of the secret variables in tool results: a
// second line of defence behind secrets.Conceal and the commands'
// environment without them.
func (a *runner) scrubber(vars []string) *secrets.Scrubber {
	s := secrets.NewScrubber()
	// Every token of the catalog, not only those of the servers in use.
	for _, v := range slices.Concat(vars, secrets.Names(a.io.getenv), a.io.settings.TokenEnvNames()) {
		s.Add(a.io.getenv(v))
	}
	return s
}

// warnUnmaskable says, once, which secrets are too short to be masked
// (secrets.MinLen): they are still kept from the commands' environment,
// but a value of a few characters is never used as a redaction pattern.
func (a *runner) warnUnmaskable(vars []string) {
	short := secrets.Unmaskable(a.io.getenv, append(vars, secrets.Names(a.io.getenv)...))
	if len(short) == 0 {
		return
	}
	fmt.Fprintf(a.io.stderr, "%s: warning: %s is shorter than %d characters and cannot be scrubbed from tool output and messages; use the real key\n", programName, "$"+strings.Join(short, ", $"), secrets.MinLen)
}

// trackProcesses kills what an earlier run in this directory left behind
// when it was killed, then starts this run's process record.
func (a *runner) trackProcesses() error {
	if a.procs != nil {
		return nil // already, before the MCP servers started
	}
	var err error
	a.procs, err = cmdutil.TrackProcesses(a.cwd, a.io.stderr)
	return err
}
