package assemble

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
	Mode     string
	writable []string
	Network  string
}

func AddSandboxFlags(fl *pflag.FlagSet, f *sandboxFlags) {
	fl.StringVar(&f.Mode, "sandbox", string(sandbox.Workspace), "where bash, bg, write and edit may write: workspace (the working directory, the temporary and cache directories, each --writable), read-only (the temporary directory only) or off")
	fl.StringArrayVar(&f.writable, "writable", nil, "another directory the sandbox lets commands and the file tools write to (repeatable)")
	fl.StringVar(&f.Network, "network", "on", "on, off (commands may not bind or connect TCP; Landlock ABI 4 or later) or rules (commands reach only the domains WebFetch(domain:…) rules allow, through tiny-go's proxy)")
}

// newSandbox validates the sandbox flags and prepares the sandbox of cwd,
// printing its warning line, if any, to stderr.
func (a *Runner) newSandbox() error {
	f := a.Flags.Sandbox
	mode, err := sandbox.ParseMode(f.Mode)
	if err != nil {
		return cmdutil.UsageError{Err: err}
	}
	if f.Network != "on" && f.Network != "off" && f.Network != "rules" {
		return cmdutil.UsageErrorf("--network must be on, off or rules, not %q", f.Network)
	}
	if mode != sandbox.Workspace && len(f.writable) > 0 {
		return cmdutil.UsageErrorf("--writable needs --sandbox workspace")
	}
	p := sandbox.Policy{
		Mode:       mode,
		WorkDir:    a.Cwd,
		Writable:   append(append([]string(nil), f.writable...), a.additionalDirectories()...),
		NetworkOff: f.Network == "off",
		Getenv:     a.IO.Getenv,
		Hidden:     a.hiddenPaths(),
	}
	if f.Network == "rules" {
		p.NetworkRules = a.networkProxy()
	}
	sb, warning, err := sandbox.New(p)
	if err != nil {
		return cmdutil.UsageError{Err: err}
	}
	if warning != "" {
		fmt.Fprintln(a.IO.Stderr, warning)
	}
	if line := sandbox.PlatformLine(runtime.GOOS, sb.Confined()); line != "" {
		fmt.Fprintln(a.IO.Stderr, line)
	}
	a.Sandbox = sb
	a.warnUnhidden()
	return nil
}

// scrubber masks the values of the secret variables in tool results: a
// second line of defence behind secrets.Conceal and the commands'
// environment without them.
func (a *Runner) scrubber(vars []string) *secrets.Scrubber {
	s := secrets.NewScrubber()
	// Every token of the catalog, not only those of the servers in use.
	for _, v := range slices.Concat(vars, secrets.Names(a.IO.Getenv), a.IO.Settings.TokenEnvNames()) {
		s.Add(a.IO.Getenv(v))
	}
	return s
}

// warnUnmaskable says, once, which secrets are too short to be masked
// (secrets.MinLen): they are still kept from the commands' environment,
// but a value of a few characters is never used as a redaction pattern.
func (a *Runner) warnUnmaskable(vars []string) {
	short := secrets.Unmaskable(a.IO.Getenv, append(vars, secrets.Names(a.IO.Getenv)...))
	if len(short) == 0 {
		return
	}
	fmt.Fprintf(a.IO.Stderr, "%s: warning: %s is shorter than %d characters and cannot be scrubbed from tool output and messages; use the real key\n", cmdutil.ProgramName, "$"+strings.Join(short, ", $"), secrets.MinLen)
}

// trackProcesses kills what an earlier run in this directory left behind
// when it was killed, then starts this run's process record.
func (a *Runner) trackProcesses() error {
	if a.procs != nil {
		return nil // already, before the MCP servers started
	}
	var err error
	a.procs, err = cmdutil.TrackProcesses(a.Cwd, a.IO.Stderr)
	return err
}
