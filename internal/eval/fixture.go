// A task's fixture: the repository the agent works in, copied and made a
// git repository with a stable configuration.

package eval

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// setUp copies the fixture into repo, makes it a git repository with one
// commit, and copies the optional outside/ folder beside it.
func setUp(t Task, root, repo string, stableEnv []string) error {
	if err := copyTree(filepath.Join(t.Dir, fixtureDir), repo); err != nil {
		return err
	}
	outside := filepath.Join(t.Dir, outsideDir)
	if fi, err := os.Stat(outside); err == nil && fi.IsDir() {
		if err := copyTree(outside, filepath.Join(root, outsideDir)); err != nil {
			return err
		}
	}
	git := func(args ...string) error {
		cmd := exec.Command("git", append(fixtureGitConfig(args[0]), args...)...)
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), stableEnv...)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("git %s: %v: %s", args[0], err, lastLine(string(out)))
		}
		return nil
	}
	if err := git("init", "-q", "-b", "main"); err != nil {
		return err
	}
	// The agent's session lives in .tiny-agent/; test.sh's git status
	// should not see it.
	if err := os.WriteFile(filepath.Join(repo, ".git", "info", "exclude"), []byte(".tiny-agent/\n"), 0o644); err != nil {
		return err
	}
	if err := git("add", "-A"); err != nil {
		return err
	}
	return git("commit", "-q", "--allow-empty", "-m", "fixture")
}

// fixtureGitConfig is how git runs to make a fixture a repository: no
// signing or hooks of the user's, and no `git gc --auto` left running in
// the background. `add` checks every file into one pack (git's bulk
// check-in of files over core.bigFileThreshold, set for this command
// only): 20,000 files are then one pack, not 20,000 loose objects made.
func fixtureGitConfig(command string) []string {
	c := []string{"-c", "commit.gpgsign=false", "-c", "core.hooksPath=/dev/null", "-c", "gc.auto=0"}
	if command == "add" {
		c = append(c, "-c", "core.bigFileThreshold=1")
	}
	return c
}

// copyTree copies regular files, folders and symbolic links, keeping
// file modes (test scripts stay executable).
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case info.Mode()&os.ModeSymlink != 0:
			link, err := os.Readlink(path)
			if err != nil {
				return err
			}
			return os.Symlink(link, target)
		case info.Mode().IsRegular():
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			return os.WriteFile(target, data, info.Mode().Perm())
		}
		return fmt.Errorf("%s is neither a file, a folder nor a link", path)
	})
}
