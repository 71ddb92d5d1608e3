package checkpoint

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"mvdan.cc/sh/v3/syntax"
)

// What a rewind cannot undo, found from the words of a command before it
// runs: effects outside the machine (a push, an upload, a request) and
// changes to paths outside the working directory. It is a reading of the
// command line, not a guarantee: a script can do either without saying
// so. The rewind names them, one line per kind.

// Kinds of Record.Beyond entries ("<kind>\t<command>").
const (
	beyondMachine = "machine"
	beyondOutside = "outside"
)

// networkCommands reach other machines whatever their arguments; the
// map's value, when set, is the subcommand that does.
var networkCommands = map[string][]string{
	"git": {"push", "send-email", "request-pull"}, "curl": nil, "wget": nil, "ssh": nil, "scp": nil,
	"sftp": nil, "rsync": nil, "nc": nil, "ncat": nil, "telnet": nil, "ftp": nil, "gh": nil,
	"npm": {"publish", "unpublish", "deprecate"}, "yarn": {"publish"}, "pnpm": {"publish"},
	"cargo": {"publish", "yank"}, "docker": {"push", "login"}, "podman": {"push"}, "twine": {"upload"},
	"gem": {"push", "yank"}, "aws": nil, "gcloud": nil, "az": nil, "kubectl": nil, "helm": nil,
	"terraform": {"apply", "destroy", "import"}, "sendmail": nil, "mail": nil, "http": nil, "https": nil,
}

// writingCommands change the paths they are given.
var writingCommands = map[string]bool{
	"rm": true, "rmdir": true, "mv": true, "cp": true, "ln": true, "mkdir": true, "touch": true,
	"chmod": true, "chown": true, "chgrp": true, "tee": true, "truncate": true, "install": true,
	"unlink": true, "dd": true, "sed": true, "shred": true, "tar": true, "unzip": true,
}

// Beyond reads a bash or bg call's command for what no rewind can undo.
func Beyond(cwd, tool string, args jsontext.Value) []string {
	if tool != "bash" && tool != "bg" {
		return nil
	}
	var a struct {
		Command string `json:"command"`
	}
	if json.Unmarshal(args, &a, json.RejectUnknownMembers(false)) != nil || a.Command == "" {
		return nil
	}
	return beyondOf(cwd, a.Command)
}

func beyondOf(cwd, command string) []string {
	f, err := syntax.NewParser().Parse(strings.NewReader(command), "")
	if err != nil {
		return nil
	}
	var out []string
	add := func(kind, what string) {
		e := kind + "\t" + what
		if !slices.Contains(out, e) {
			out = append(out, e)
		}
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Redirect:
			if n.Word != nil && (n.Op == syntax.RdrOut || n.Op == syntax.AppOut || n.Op == syntax.RdrAll || n.Op == syntax.AppAll || n.Op == syntax.RdrClob) {
				if w := n.Word.Lit(); outsidePath(cwd, w) {
					add(beyondOutside, "> "+w)
				}
			}
		case *syntax.CallExpr:
			words := make([]string, 0, len(n.Args))
			for _, w := range n.Args {
				words = append(words, w.Lit())
			}
			if len(words) == 0 {
				return true
			}
			name := filepath.Base(words[0])
			line := strings.Join(words, " ")
			if subs, ok := networkCommands[name]; ok && (subs == nil || hasAny(words[1:], subs)) {
				add(beyondMachine, line)
			}
			if writingCommands[name] {
				for _, w := range words[1:] {
					if outsidePath(cwd, strings.TrimPrefix(w, "of=")) {
						add(beyondOutside, line)
						break
					}
				}
			}
		}
		return true
	})
	return out
}

func hasAny(words, subs []string) bool {
	for _, w := range words {
		if slices.Contains(subs, w) {
			return true
		}
	}
	return false
}

// outsidePath reports whether a literal word names a path outside cwd
// (not a device such as /dev/null).
func outsidePath(cwd, w string) bool {
	switch {
	case w == "":
		return false
	case w == "~" || strings.HasPrefix(w, "~/"):
		return true
	case filepath.IsAbs(w):
		if strings.HasPrefix(w, "/dev/") || strings.HasPrefix(w, "/proc/") {
			return false
		}
		rel, err := filepath.Rel(cwd, filepath.Clean(w))
		return err != nil || rel == ".." || strings.HasPrefix(rel, "../")
	}
	c := filepath.Clean(w)
	return c == ".." || strings.HasPrefix(c, "../")
}

// beyondWarnings names, one line per kind, what the effects of recs did
// that the rewind cannot undo.
func beyondWarnings(recs []Record) []string {
	byKind := map[string][]string{}
	for _, r := range recs {
		if r.Phase != PhaseBefore {
			continue
		}
		for _, e := range r.Beyond {
			kind, what, _ := strings.Cut(e, "\t")
			byKind[kind] = append(byKind[kind], what)
		}
	}
	var out []string
	for _, k := range []struct{ kind, text string }{
		{beyondMachine, "effects outside the machine cannot be undone"},
		{beyondOutside, "paths outside the working directory are not put back"},
	} {
		if cmds := byKind[k.kind]; len(cmds) > 0 {
			out = append(out, k.text+": "+strings.Join(cmds, "; "))
		}
	}
	return out
}
