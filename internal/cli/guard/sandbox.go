package guard

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/tiny-agent/tiny-go/internal/cli/cmdutil"
	"github.com/tiny-agent/tiny-go/internal/netproxy"
	"github.com/tiny-agent/tiny-go/internal/permissions"
	"github.com/tiny-agent/tiny-go/internal/sandbox"
	"github.com/tiny-agent/tiny-go/internal/secrets"
)

// SandboxFlags are --sandbox, --writable and --network (tools.md,
// "Sandbox").
type SandboxFlags struct {
	Mode     string
	Writable []string
	Network  string
}

// AddSandboxFlags defines the sandbox flags on fl.
func AddSandboxFlags(fl *pflag.FlagSet, f *SandboxFlags) {
	fl.StringVar(&f.Mode, "sandbox", string(sandbox.Workspace), "where bash, bg, write and edit may write: workspace (the working directory, the temporary and cache directories, each --writable), read-only (the temporary directory only) or off")
	fl.StringArrayVar(&f.Writable, "writable", nil, "another directory the sandbox lets commands and the file tools write to (repeatable)")
	fl.StringVar(&f.Network, "network", "on", "on, off (commands may not bind or connect TCP; Landlock ABI 4 or later) or rules (commands reach only the domains WebFetch(domain:…) rules allow, through tiny-go's proxy)")
}

// networkProxy is the proxy of --network rules. It decides a host as
// web_fetch does: the settings' WebFetch(domain:…) rules, read at each
// connection (an "always" answer to a fetch holds for commands at once),
// and netguard's list of the addresses only a rule naming the host opens
// (netproxy.Private).
func (g *Guard) networkProxy() *netproxy.Proxy {
	return netproxy.New(netproxy.Config{Rules: domainRules{g.Rules()}})
}

// domainRules are the settings' domain rules as the proxy asks them; an
// ask rule allows nothing, since a command's connection cannot wait for
// an answer.
type domainRules struct{ set *permissions.Settings }

func (d domainRules) Domain(host string) (bool, string) {
	kind, rule := d.set.Domain(host)
	if rule == nil {
		return false, ""
	}
	return kind == permissions.Allow, rule.Text
}

// Scrubber masks the values of the secret variables in tool results: a
// second line of defence behind secrets.Conceal and the commands'
// environment without them. tokenVars are the token variables of every
// configured server, not only those in use.
func Scrubber(getenv func(string) string, vars, tokenVars []string) *secrets.Scrubber {
	s := secrets.NewScrubber()
	for _, v := range slices.Concat(vars, secrets.Names(getenv), tokenVars) {
		s.Add(getenv(v))
	}
	return s
}

// WarnUnmaskable says, once, which secrets are too short to be masked
// (secrets.MinLen): they are still kept from the commands' environment,
// but a value of a few characters is never used as a redaction pattern.
func WarnUnmaskable(w io.Writer, getenv func(string) string, vars []string) {
	short := secrets.Unmaskable(getenv, append(vars, secrets.Names(getenv)...))
	if len(short) == 0 {
		return
	}
	fmt.Fprintf(w, "%s: warning: %s is shorter than %d characters and cannot be scrubbed from tool output and messages; use the real key\n", cmdutil.ProgramName, "$"+strings.Join(short, ", $"), secrets.MinLen)
}
