package checkpoint

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
)

// What no checkpoint can bring back (docs/checkpoints.md): a command's
// writes outside the working directory (its overlay covers the working
// directory only) and its effects beyond the machine. A rewind names them,
// one line per kind, from the commands of the calls it rewinds.

// Call is a command a rewound call ran.
type Call struct {
	Label   string // how the rewind names it ("bash c3")
	Command string
}

// networkWords are commands whose effects leave the machine.
var networkWords = regexp.MustCompile(`(^|[\s;&|(` + "`" + `])(git\s+push|git\s+send-email|curl|wget|ssh|scp|sftp|rsync|nc|(npm|yarn|pnpm)\s+publish|cargo\s+publish|twine\s+upload|docker\s+push|gh|kubectl|terraform\s+apply|aws|gcloud|az)(\s|$|;|&|\|)`)

// systemDirs are read by commands as a matter of course.
var systemDirs = []string{"/dev/", "/proc/", "/sys/", "/usr/", "/bin/", "/sbin/", "/lib", "/etc/", "/opt/", "/nix/"}

// Beyond lists, one line per kind, what the calls did that a rewind of
// the working directory cannot undo; cwd is the working directory.
func Beyond(cwd string, calls []Call) []string {
	var network, outside []string
	for _, c := range calls {
		if m := networkWords.FindStringSubmatch(c.Command); m != nil {
			network = append(network, fmt.Sprintf("%s in %s", strings.Join(strings.Fields(m[2]), " "), c.Label))
		}
		if p := outsidePath(cwd, c.Command); p != "" {
			outside = append(outside, fmt.Sprintf("%s in %s", p, c.Label))
		}
	}
	var out []string
	if len(outside) > 0 {
		out = append(out, "not put back: what commands changed outside the working directory ("+strings.Join(outside, "; ")+")")
	}
	if len(network) > 0 {
		out = append(out, "not undone: effects outside this machine ("+strings.Join(network, "; ")+")")
	}
	return out
}

// outsidePath is the first path of command that lies outside cwd and the
// system's directories, "" when none.
func outsidePath(cwd, command string) string {
	for _, f := range strings.FieldsFunc(command, func(r rune) bool { return strings.ContainsRune(" \t\n;&|<>()'\"=`", r) }) {
		switch {
		case strings.HasPrefix(f, "~"), strings.HasPrefix(f, "$HOME"):
			return f
		case !strings.HasPrefix(f, "/") || f == "/dev/null":
			continue
		}
		p := filepath.Clean(f)
		if p == cwd || strings.HasPrefix(p, cwd+"/") {
			continue
		}
		system := false
		for _, d := range systemDirs {
			if strings.HasPrefix(p+"/", d) {
				system = true
				break
			}
		}
		if !system {
			return f
		}
	}
	return ""
}
