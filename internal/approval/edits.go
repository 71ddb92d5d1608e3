package approval

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/tiny-agent/tiny-go/internal/agent"
)

// fileCommands are the commands Claude Code's acceptEdits mode runs
// without asking when every path they name is inside the working
// directory; sed too, with one substitution for a script (sedCommand):
// a script can otherwise write elsewhere (w) or run a command (e).
var fileCommands = []string{"mkdir", "touch", "rm", "rmdir", "mv", "cp"}

// sedOptions are the options of sed that name no script or file.
var sedOptions = []string{"-i", "-n", "-E", "-r"}

// protectedDirs are never changed without asking, as in Claude Code: the
// repository, tiny-go's sessions and Claude Code's settings.
var protectedDirs = []string{".git", ".tiny-agent", ".claude"}

// EditsInside reports whether a call only changes files inside workDir,
// which Claude Code's acceptEdits mode allows without asking: a built-in
// write or edit of such a path, or a bash command line made only of
// mkdir, touch, rm, rmdir, mv, cp and sed (one substitution) whose every
// path lies there. Anything it cannot tell for sure (variables,
// substitutions, redirections, brace expansion, ~) is not. It is the one
// check of the edits mode, interactive and headless (acceptEdits) alike.
func EditsInside(req agent.ApprovalRequest, workDir string) bool {
	if !req.Builtin {
		return false
	}
	switch req.Tool {
	case "write", "edit":
		p, ok := stringField(req.Arguments, "path")
		return ok && p != "" && pathInside(workDir, p)
	case "bash":
		cmd, ok := stringField(req.Arguments, "command")
		return ok && FileCommandInside(cmd, workDir)
	}
	return false
}

// FileCommandInside reports whether a shell command line only runs
// mkdir, touch, rm, rmdir, mv, cp and sed on paths inside workDir.
func FileCommandInside(command, workDir string) bool {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(command), "")
	if err != nil || len(f.Stmts) == 0 {
		return false
	}
	ok := true
	syntax.Walk(f, func(n syntax.Node) bool {
		if !ok || n == nil {
			return false
		}
		switch n := n.(type) {
		case *syntax.File, *syntax.Comment:
		case *syntax.Stmt:
			ok = len(n.Redirs) == 0 && !n.Negated
		case *syntax.BinaryCmd:
			ok = n.Op == syntax.AndStmt || n.Op == syntax.OrStmt
		case *syntax.Subshell, *syntax.Block:
		case *syntax.CallExpr:
			ok = fileCommand(n, workDir)
			return false
		default:
			ok = false
		}
		return ok
	})
	return ok
}

// fileCommand reports whether one simple command is a file command whose
// arguments are all plain words naming paths inside workDir.
func fileCommand(c *syntax.CallExpr, workDir string) bool {
	if len(c.Assigns) > 0 || len(c.Args) == 0 {
		return false
	}
	name, ok := plainWord(c.Args[0])
	if ok && name == "sed" {
		return sedCommand(c.Args[1:], workDir)
	}
	if !ok || !slices.Contains(fileCommands, name) {
		return false
	}
	options := true
	for _, w := range c.Args[1:] {
		s, ok := plainWord(w)
		if !ok {
			return false
		}
		if options && s == "--" {
			options = false
			continue
		}
		if options && strings.HasPrefix(s, "-") {
			// An option's value (--target-directory=/x) is a path too;
			// one run into the option (-t/x) cannot be told apart.
			_, v, has := strings.Cut(s, "=")
			if !has && strings.Contains(s, "/") {
				return false
			}
			if _, ok := treePath(workDir, v); has && !ok {
				return false
			}
			continue
		}
		// The working directory itself may be a destination (mv a .),
		// never what is removed.
		rel, ok := treePath(workDir, s)
		if !ok || (rel == "" && (name == "rm" || name == "rmdir")) {
			return false
		}
	}
	return true
}

// sedCommand reports whether sed's arguments are options of sedOptions,
// one substitution (substitution), and at least one file inside
// workDir.
func sedCommand(args []*syntax.Word, workDir string) bool {
	script, files, options := "", 0, true
	for _, w := range args {
		s, ok := plainWord(w)
		switch {
		case !ok:
			return false
		case options && s == "--":
			options = false
		case options && strings.HasPrefix(s, "-"):
			if !slices.Contains(sedOptions, s) {
				return false // -e, -f, -s, -i.bak and the like
			}
		case script == "":
			if !substitution(s) {
				return false
			}
			script = s
		default:
			if rel, ok := treePath(workDir, s); !ok || rel == "" {
				return false
			}
			files++
		}
	}
	return files > 0
}

// substitution reports whether a sed script is one s command whose flags
// neither write a file (w) nor run one (e): s<d>pattern<d>replacement<d>
// and flags among g, p, i, I, m, M and digits. A glob character is
// refused, as the shell could expand an unquoted one.
func substitution(script string) bool {
	if len(script) < 4 || script[0] != 's' || strings.ContainsAny(script, "*?[\\\n") {
		return false
	}
	parts := strings.Split(script[2:], script[1:2])
	return len(parts) == 3 && strings.Trim(parts[2], "gpiImM0123456789") == ""
}

// plainWord is a word's text when it is made only of literal parts
// (quoted or not) that expand to themselves apart from globbing.
func plainWord(w *syntax.Word) (string, bool) {
	var b strings.Builder
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			if strings.ContainsAny(p.Value, `\{}~`) {
				return "", false
			}
			b.WriteString(p.Value)
		case *syntax.SglQuoted:
			if p.Dollar {
				return "", false
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				l, ok := q.(*syntax.Lit)
				if !ok || strings.Contains(l.Value, `\`) {
					return "", false
				}
				b.WriteString(l.Value)
			}
		default:
			return "", false
		}
	}
	return b.String(), b.Len() > 0
}

// pathInside reports whether p (relative to workDir) stays inside it,
// outside the protected directories, with symbolic links of its existing
// part resolved.
func pathInside(workDir, p string) bool {
	rel, ok := treePath(workDir, p)
	return ok && rel != ""
}

// treePath is p relative to workDir's resolved root ("" for the root
// itself) when p stays inside it and outside the protected directories. A
// glob may not begin an element with a dot: .* matches .. in some shells.
func treePath(workDir, p string) (string, bool) {
	if p == "" || strings.ContainsRune(p, 0) {
		return "", false
	}
	for _, el := range strings.Split(filepath.ToSlash(p), "/") {
		if strings.HasPrefix(el, ".") && strings.ContainsAny(el, "*?[") {
			return "", false
		}
	}
	root, err := filepath.EvalSymlinks(workDir)
	if err != nil {
		return "", false
	}
	if filepath.IsAbs(p) {
		rel, ok := within(workDir, filepath.Clean(p))
		if !ok {
			if rel, ok = within(root, filepath.Clean(p)); !ok {
				return "", false
			}
		}
		p = rel
	}
	rel, ok := within(root, resolveExisting(filepath.Join(root, p)))
	if !ok {
		return "", false
	}
	for _, el := range strings.Split(filepath.ToSlash(rel), "/") {
		if slices.Contains(protectedDirs, el) {
			return "", false
		}
	}
	if rel == "." {
		rel = ""
	}
	return rel, true
}

// within is path relative to root when it lies inside root (or is it).
func within(root, path string) (string, bool) {
	rel, err := filepath.Rel(root, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return "", false
	}
	return rel, true
}

// resolveExisting resolves the symbolic links of the longest existing
// prefix of an absolute, clean path; the rest is kept as written.
func resolveExisting(path string) string {
	rest := ""
	for cur := path; ; cur = filepath.Dir(cur) {
		if r, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(r, rest)
		}
		if _, err := os.Lstat(cur); err == nil {
			// A link that leads nowhere: where it would be created is
			// unknown.
			return "/"
		}
		if filepath.Dir(cur) == cur {
			return path
		}
		rest = filepath.Join(filepath.Base(cur), rest)
	}
}
