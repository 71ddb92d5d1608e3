package gitcmd

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// sh runs script in dir with plain git (the attacker's side).
func sh(t *testing.T, dir, script string) {
	t.Helper()
	cmd := exec.Command("sh", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", script, err, out)
	}
}

// plantedRepo is a repository with one commit and pwn, a program that
// appends its argument to the returned marker file.
func plantedRepo(t *testing.T) (dir, pwn, marker string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	base := t.TempDir()
	dir, marker, pwn = filepath.Join(base, "repo"), filepath.Join(base, "ran"), filepath.Join(base, "pwn.sh")
	os.Mkdir(dir, 0o755)
	script := "#!/bin/sh\necho \"$1\" >> " + marker + "\ncase \"$1\" in filter*) exec cat;; esac\nexit 0\n"
	if err := os.WriteFile(pwn, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	sh(t, dir, "git init -q -b main && echo one > a.txt && git add -A && git -c user.name=t -c user.email=t@t commit -qm one")
	return dir, pwn, marker
}

func ran(t *testing.T, marker string) string {
	data, _ := os.ReadFile(marker)
	return strings.TrimSpace(string(data))
}

// A partial clone fetches a missing object from its promisor remote,
// running the remote's upload-pack (or an ext:: command): tiny-go's git
// does not, whatever protocol.*.allow the repository sets. Plain git
// does (the test can fail).
func TestRepoNoLazyFetch(t *testing.T) {
	dir, pwn, marker := plantedRepo(t)
	sh(t, dir, "git config core.repositoryformatversion 1 && git config extensions.partialClone origin && "+
		"git config remote.origin.url \"$PWD\" && git config remote.origin.promisor true && "+
		"git config remote.origin.uploadpack '"+pwn+" lazy-fetch' && git config protocol.file.allow always && "+
		"git config remote.x.url 'ext::"+pwn+" ext' && git config remote.x.promisor true && git config protocol.ext.allow always")
	missing := strings.Repeat("1", 40)
	cmd := Repo(context.Background(), dir, nil, "update-ref", "refs/tiny-agent/keep/x", missing)
	if err := cmd.Run(); err == nil {
		t.Fatal("update-ref to a missing object succeeded")
	}
	if got := ran(t, marker); got != "" {
		t.Fatalf("tiny-go's git ran %q", got)
	}
	plain := exec.Command("git", "update-ref", "refs/x", missing)
	plain.Dir, plain.Stdin = dir, strings.NewReader("")
	_ = plain.Run()
	if got := ran(t, marker); !strings.Contains(got, "lazy-fetch") {
		t.Fatalf("plain git did not fetch lazily (ran %q): the attack is not what the test thinks", got)
	}
}

// Hooks, fsmonitor and an included config on the user's repository.
func TestRepoNoHooksFsmonitorInclude(t *testing.T) {
	dir, pwn, marker := plantedRepo(t)
	inc := filepath.Join(dir, "inc.cfg")
	os.WriteFile(inc, []byte("[core]\n\tfsmonitor = \""+pwn+" include\"\n"), 0o644)
	sh(t, dir, "mkdir -p hooks && printf '#!/bin/sh\\n"+pwn+" hook\\n' > hooks/reference-transaction && chmod +x hooks/reference-transaction && "+
		"cp hooks/reference-transaction .git/hooks/ && git config core.hooksPath \"$PWD/hooks\" && git config include.path "+inc)
	ctx := context.Background()
	for _, args := range [][]string{
		{"update-ref", "refs/heads/b", "HEAD"}, {"symbolic-ref", "HEAD", "refs/heads/b"},
		{"for-each-ref"}, {"write-tree"}, {"check-ignore", "--no-index", "-q", "x"}, {"rev-parse", "HEAD"},
	} {
		_ = Repo(ctx, dir, nil, args...).Run()
	}
	if got := ran(t, marker); got != "" {
		t.Fatalf("tiny-go's git ran %q", got)
	}
	plain := exec.Command("git", "update-ref", "refs/heads/c", "HEAD")
	plain.Dir = dir
	_ = plain.Run()
	if got := ran(t, marker); got == "" {
		t.Fatal("plain git ran no hook: the attack is not what the test thinks")
	}
}

// Git that hashes the work tree runs on an isolated directory: no
// filter from .gitattributes, .git/info/attributes or the repository's
// config runs, and the blobs are the files' bytes.
func TestIsolatedAddRunsNoFilter(t *testing.T) {
	dir, pwn, marker := plantedRepo(t)
	sh(t, dir, "printf '*.txt filter=p text eol=crlf ident\\n' > .gitattributes && printf '*.md filter=q\\n' >> .git/info/attributes && "+
		"git config filter.p.clean '"+pwn+" filter-clean' && git config filter.p.required true && "+
		"git config filter.q.process '"+pwn+" filter-process' && git config core.fsmonitor '"+pwn+" fsmonitor' && "+
		"printf 'two $Id$\\n' > a.txt && echo md > b.md && echo ignored > c.log && echo '*.log' >> .git/info/exclude")
	priv := t.TempDir()
	env, err := Isolate(Isolated{Dir: priv, WorkTree: dir, Alternates: filepath.Join(dir, ".git", "objects"),
		Exclude: filepath.Join(dir, ".git", "info", "exclude"), Attributes: Raw})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if out, err := Command(ctx, dir, Env(os.Environ(), env...), "add", "-A", "--", ".").CombinedOutput(); err != nil {
		t.Fatalf("add: %v\n%s", err, out)
	}
	out, err := Command(ctx, dir, Env(os.Environ(), env...), "ls-files", "-s").Output()
	if err != nil {
		t.Fatal(err)
	}
	if got := ran(t, marker); got != "" {
		t.Fatalf("tiny-go's git ran %q", got)
	}
	if strings.Contains(string(out), "c.log") || !strings.Contains(string(out), "b.md") {
		t.Fatalf("the repository's info/exclude was not applied:\n%s", out)
	}
	blob, err := Command(ctx, dir, Env(os.Environ(), env...), "cat-file", "blob", ":a.txt").Output()
	if err != nil || string(blob) != "two $Id$\n" {
		t.Fatalf("a.txt was stored as %q (%v), want its bytes", blob, err)
	}
}

func TestRepoRefusesContentReaders(t *testing.T) {
	for _, sub := range []string{"add", "diff", "status", "hash-object", "update-index", "checkout", "stash", ""} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Repo(%q) did not refuse", sub)
				}
			}()
			Repo(context.Background(), t.TempDir(), nil, sub)
		}()
	}
}

func TestEnvDropsAndFixes(t *testing.T) {
	env := Env([]string{"PATH=/bin", "GIT_DIR=/x", "GIT_SSH_COMMAND=evil", "GIT_EXTERNAL_DIFF=evil", "GIT_CONFIG_COUNT=1",
		"GIT_CONFIG_KEY_0=core.fsmonitor", "GIT_CONFIG_VALUE_0=evil", "GIT_CONFIG_PARAMETERS='core.pager'='evil'", "GIT_ALLOW_PROTOCOL=file"}, "GIT_DIR=/private")
	for _, kv := range env {
		if strings.Contains(kv, "evil") || kv == "GIT_DIR=/x" || kv == "GIT_ALLOW_PROTOCOL=file" {
			t.Errorf("kept %s", kv)
		}
	}
	for _, want := range []string{"PATH=/bin", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_ALLOW_PROTOCOL=", "GIT_DIR=/private"} {
		if !slices.Contains(env, want) {
			t.Errorf("no %s in %q", want, env)
		}
	}
}

// The user's own safe.directory and core.excludesFile come from the
// global config, never from a repository's.
func TestLoadUser(t *testing.T) {
	dir, _, _ := plantedRepo(t)
	sh(t, dir, "git config safe.directory '*' && git config core.excludesFile /planted")
	global := filepath.Join(t.TempDir(), "gitconfig")
	os.WriteFile(global, []byte("[safe]\n\tdirectory = /srv/repo\n[core]\n\texcludesFile = /home/u/ignore\n"), 0o644)
	t.Setenv("GIT_CONFIG_GLOBAL", global)
	t.Setenv("GIT_DIR", filepath.Join(dir, ".git"))
	u := loadUser()
	if !slices.Equal(u.safe, []string{"-c", "safe.directory=/srv/repo"}) || u.excludes != "/home/u/ignore" {
		t.Fatalf("got %+v", u)
	}
}

// A fleet worker's final diff: the agent's planted filter, textconv and
// external diff do not run; the patch holds the work tree's changes and
// leaves out what the pathspec excludes; the repository's index is kept.
func TestDiffRunsNoPlantedProgram(t *testing.T) {
	dir, pwn, marker := plantedRepo(t)
	sh(t, dir, "printf '*.txt filter=p diff=d\\n' > .gitattributes && git config filter.p.clean '"+pwn+" filter-clean' && "+
		"git config diff.d.textconv '"+pwn+" textconv' && git config diff.d.command '"+pwn+" diff-driver' && "+
		"git config diff.external '"+pwn+" diff-external' && git config core.fsmonitor '"+pwn+" fsmonitor' && "+
		"echo two >> a.txt && echo new > b.txt && mkdir -p .tiny-agent && echo s > .tiny-agent/s")
	index, _ := os.ReadFile(filepath.Join(dir, ".git", "index"))
	patch, err := Diff(context.Background(), dir, ".", ":(exclude).tiny-agent")
	if err != nil {
		t.Fatal(err)
	}
	if got := ran(t, marker); got != "" {
		t.Fatalf("tiny-go's git ran %q", got)
	}
	for _, want := range []string{"+two", "diff --git a/b.txt b/b.txt", "+new", "diff --git a/.gitattributes"} {
		if !strings.Contains(string(patch), want) {
			t.Errorf("no %q in the patch:\n%s", want, patch)
		}
	}
	if strings.Contains(string(patch), ".tiny-agent") {
		t.Errorf("the patch names .tiny-agent:\n%s", patch)
	}
	if after, _ := os.ReadFile(filepath.Join(dir, ".git", "index")); string(after) != string(index) {
		t.Error("the repository's index changed")
	}
}

// As root in a repository another user owns, git mode needs the user's
// global safe.directory, which tiny-go's git otherwise ignores.
func TestRepoKeepsUsersSafeDirectory(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to hand the repository to another user")
	}
	dir, _, _ := plantedRepo(t)
	if out, err := exec.Command("chown", "-R", "1000:1000", dir).CombinedOutput(); err != nil {
		t.Fatalf("chown: %v %s", err, out)
	}
	global := filepath.Join(t.TempDir(), "gitconfig")
	t.Setenv("GIT_CONFIG_GLOBAL", global)
	reset := func() { userOnce = sync.Once{} }
	reset()
	t.Cleanup(reset)
	if err := Repo(context.Background(), dir, nil, "rev-parse", "HEAD").Run(); err == nil {
		t.Fatal("git accepted another user's repository without safe.directory: the test is not what it thinks")
	}
	os.WriteFile(global, []byte("[safe]\n\tdirectory = "+dir+"\n"), 0o644)
	reset()
	if out, err := Repo(context.Background(), dir, nil, "rev-parse", "HEAD").CombinedOutput(); err != nil {
		t.Fatalf("the user's safe.directory was not passed on: %v\n%s", err, out)
	}
}
