package store

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A repository in which tiny-go ran stages nothing of .tiny-agent with a
// real `git add -A`: the directory ignores itself from its creation on,
// whichever part of tiny-go creates it, and again after a resume when the
// file went missing.
func TestStateDirIsIgnoredByGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	for _, first := range []string{"session", "sidecar"} {
		t.Run(first, func(t *testing.T) {
			dir := t.TempDir()
			git := func(args ...string) string {
				t.Helper()
				cmd := exec.Command("git", args...)
				cmd.Dir = dir
				cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_SYSTEM=/dev/null")
				out, err := cmd.CombinedOutput()
				if err != nil {
					t.Fatalf("git %v: %v: %s", args, err, out)
				}
				return string(out)
			}
			git("init", "-q")
			if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if first == "sidecar" {
				// The process records or the bg logs may come first.
				if _, err := StateDir(dir, "procs", true); err != nil {
					t.Fatal(err)
				}
			}
			s, err := Create(dir, NewHeader{Provider: "openrouter", Model: "m", EnvironmentIdentity: "e"}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			id := s.ID()
			if _, err := SidecarDir(s.Path(), true); err != nil {
				t.Fatal(err)
			}
			s.Close()
			staged := func() string {
				git("add", "-A")
				return git("diff", "--cached", "--name-only")
			}
			if got := staged(); strings.TrimSpace(got) != "main.go" {
				t.Fatalf("git add -A staged:\n%s", got)
			}
			// Removed by hand, written again on the next start.
			git("rm", "-q", "--cached", "main.go")
			if err := os.Remove(filepath.Join(dir, ".tiny-agent", ".gitignore")); err != nil {
				t.Fatal(err)
			}
			s, err = Open(dir, id, Options{})
			if err != nil {
				t.Fatal(err)
			}
			s.Close()
			if got := staged(); strings.TrimSpace(got) != "main.go" {
				t.Fatalf("after a resume, git add -A staged:\n%s", got)
			}
		})
	}
}
