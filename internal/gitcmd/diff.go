package gitcmd

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Diff is a binary patch from repo's HEAD to its work tree (untracked,
// not ignored files included), limited to pathspecs: what a fleet worker
// hands back after the agent ran there. The agent could write the
// repository's config and attributes, so the work tree is read through a
// private git directory (no filter, textconv or diff driver runs) and the
// repository's own index is left as it is.
func Diff(ctx context.Context, repo string, pathspecs ...string) ([]byte, error) {
	// rev-parse prints the options' answers first, the revision last.
	out, err := Repo(ctx, repo, nil, "rev-parse", "--show-toplevel", "--git-path", "objects",
		"--git-path", "info/exclude", "--show-object-format", "HEAD").Output()
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if err != nil || len(lines) != 5 {
		return nil, fmt.Errorf("git rev-parse HEAD: %w", err)
	}
	abs := func(p string) string {
		if !filepath.IsAbs(p) {
			return filepath.Join(repo, p)
		}
		return p
	}
	priv, err := os.MkdirTemp("", "tiny-go-diff-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(priv)
	head := lines[4]
	extra, err := Isolate(Isolated{Dir: priv, WorkTree: lines[0], Alternates: abs(lines[1]),
		Exclude: abs(lines[2]), Format: lines[3], Attributes: NoFilters})
	if err != nil {
		return nil, err
	}
	env := Env(os.Environ(), extra...)
	run := func(args ...string) ([]byte, error) {
		out, err := Command(ctx, repo, env, args...).Output()
		if err != nil {
			return nil, fmt.Errorf("git %s: %w", args[0], err)
		}
		return out, nil
	}
	if _, err := run("read-tree", head); err != nil {
		return nil, err
	}
	// A file git cannot read is left out of the patch, as before.
	_, _ = run(append([]string{"add", "-A", "--ignore-errors", "--"}, pathspecs...)...)
	return run(append([]string{"diff", "--cached", "--binary", "--no-textconv", "--no-ext-diff", head, "--"}, pathspecs...)...)
}
