package approval

import (
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// In --approval review a command runs sealed (network off, nothing
// outside the project writable) and the user is asked about what it
// changed. A command that plainly needs more is asked about before it
// runs, as in ask mode, and runs unsealed: a sealed run would only fail,
// and what it did outside could not be reviewed anyway.

// outsidePrograms reach the network or the system whatever their
// arguments.
var outsidePrograms = []string{
	"curl", "wget", "ssh", "scp", "sftp", "rsync", "nc", "ncat", "netcat", "telnet", "ftp", "socat",
	"sudo", "su", "doas", "pkexec", "systemctl", "service", "mount", "umount", "crontab",
	"apt", "apt-get", "dpkg", "yum", "dnf", "apk", "pacman", "brew", "snap",
	"docker", "podman", "kubectl", "helm", "gh", "aws", "gcloud", "az", "terraform", "npx", "pnpx", "bunx",
}

// outsideSubcommands reach the network for these subcommands.
var outsideSubcommands = map[string][]string{
	"git":    {"push", "pull", "fetch", "clone", "ls-remote", "remote", "submodule"},
	"npm":    {"install", "i", "ci", "add", "publish", "update", "upgrade", "exec", "login"},
	"pnpm":   {"install", "i", "add", "publish", "update", "upgrade", "dlx"},
	"yarn":   {"install", "add", "publish", "upgrade", "dlx"},
	"bun":    {"install", "i", "add", "publish", "update"},
	"pip":    {"install", "download"},
	"pip3":   {"install", "download"},
	"uv":     {"pip", "add", "sync", "tool", "run"},
	"poetry": {"install", "add", "update", "publish"},
	"go":     {"get", "install", "mod"},
	"cargo":  {"install", "fetch", "publish", "add", "update"},
	"gem":    {"install", "push"},
	"bundle": {"install", "update"},
}

// Unsealed reports whether a command line runs something a sealed run
// cannot serve (outsidePrograms, outsideSubcommands, `python -m pip
// install`), or runs a program it does not name (`$cmd`, a line that does
// not parse): those are asked about before they run.
func Unsealed(command string) bool {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(command), "")
	if err != nil {
		return true
	}
	outside := false
	syntax.Walk(f, func(n syntax.Node) bool {
		if c, ok := n.(*syntax.CallExpr); ok && !outside && len(c.Args) > 0 {
			outside = callNeedsOutside(c)
		}
		return !outside
	})
	return outside
}

func callNeedsOutside(c *syntax.CallExpr) bool {
	var words []string
	for _, a := range c.Args {
		words = append(words, a.Lit())
	}
	name := words[0]
	if name == "" {
		return true // a program named by an expansion
	}
	name = name[strings.LastIndexByte(name, '/')+1:]
	if slices.Contains(outsidePrograms, name) {
		return true
	}
	args := words[1:]
	if strings.HasPrefix(name, "python") && len(args) >= 3 && args[0] == "-m" && args[1] == "pip" {
		name, args = "pip", args[2:]
	}
	sub := firstArgument(args)
	return sub != "" && slices.Contains(outsideSubcommands[name], sub)
}

// firstArgument is the first word that is not an option ("git -C d push"
// is push: an option's value is skipped when the option takes one).
func firstArgument(args []string) string {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-C" || a == "-c" || a == "--prefix" || a == "--git-dir" || a == "--work-tree":
			i++
		case strings.HasPrefix(a, "-"):
		default:
			return a
		}
	}
	return ""
}
