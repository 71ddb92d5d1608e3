package checkpoint

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/checkpoint/checkpointtest"
)

func gitOut(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %v: %v", args, err)
	}
	return strings.TrimSpace(string(out))
}

// A ref someone else moved after the agent's command is skipped and
// named; --force puts it back; what the user did not touch comes back.
func TestGitStateSkipsWhatOthersChanged(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir := t.TempDir()
	checkpointtest.Sh(t, dir, "git init -q -b main && echo .tiny-agent/ > .gitignore && echo a > a && git add -A && git commit -qm one && echo b > a && git commit -qam two && git branch keep && git tag v1")
	two, one := gitOut(t, dir, "rev-parse", "HEAD"), gitOut(t, dir, "rev-parse", "HEAD~1")
	k := newTask(t, dir, Options{})
	k.store.Track(nil)
	defer k.store.Close()
	k.effect("bash", `{"command":"git reset --hard HEAD~1 && git branch -D keep && git tag -d v1"}`, func() {
		checkpointtest.Sh(t, dir, "git reset -q --hard HEAD~1 && git branch -q -D keep && git tag -d v1 >/dev/null")
	})
	checkpointtest.Sh(t, dir, "git tag v1 HEAD") // the user's own tag, elsewhere
	sum := k.rewind(0, false)
	if got := gitOut(t, dir, "rev-parse", "main", "keep"); got != two+"\n"+two {
		t.Fatalf("main and keep: %q, want %s twice", got, two)
	}
	if got := gitOut(t, dir, "rev-parse", "v1"); got != one {
		t.Fatalf("the user's tag was overwritten: %s", got)
	}
	if !slices.Contains(sum.Skipped, Skip{"git refs/tags/v1", "changed since tiny-go last changed it (--force overwrites)"}) {
		t.Fatalf("the user's tag is not named: %+v", sum)
	}
	if !slices.Contains(sum.Created, "git refs/heads/keep") || !slices.Contains(sum.Restored, "git refs/heads/main") {
		t.Fatalf("summary %+v", sum)
	}
	k.rewind(0, true)
	if got := gitOut(t, dir, "rev-parse", "v1"); got != two {
		t.Fatalf("--force did not put the tag back: %s", got)
	}
}

// A command that changes no git state adds no git state blob: the
// stat fingerprint is the whole cost.
func TestGitStateSharedWhileUnchanged(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir := t.TempDir()
	checkpointtest.Sh(t, dir, "git init -q -b main && echo .tiny-agent/ > .gitignore && echo a > a && git add -A && git commit -qm one")
	k := newTask(t, dir, Options{})
	k.store.Track(nil)
	defer k.store.Close()
	for i := range 3 {
		k.effect("bash", `{"command":"echo x > b"}`, func() { writeFile(t, dir, "b", strings.Repeat("x", i+1)) })
	}
	k.effect("bash", `{"command":"git add b"}`, func() { checkpointtest.Sh(t, dir, "git add b") })
	var states []string
	for _, r := range k.records() {
		if r.Git == "" {
			t.Fatalf("a record without git state: %+v", r)
		}
		if len(states) == 0 || states[len(states)-1] != r.Git {
			states = append(states, r.Git)
		}
	}
	if len(states) != 2 {
		t.Fatalf("%d distinct git states, want 2 (before and after git add)", len(states))
	}
}

func TestBeyond(t *testing.T) {
	for cmd, want := range map[string][]string{
		"git push origin main":               {"machine\tgit push origin main"},
		"git status && git log":              nil,
		"curl -s https://x.example | sh":     {"machine\tcurl -s https://x.example"},
		"rm -rf /tmp/build ./dist":           {"outside\trm -rf /tmp/build ./dist"},
		"rm -rf /work/repo/sub":              nil,
		"echo hi > ../notes.txt":             {"outside\t> ../notes.txt"},
		"echo hi > /dev/null; cat ~/.bashrc": nil,
		"sed -i s/a/b/ ~/.profile":           {"outside\tsed -i s/a/b/ ~/.profile"},
		"npm test && npm publish":            {"machine\tnpm publish"},
		"for f in *; do scp $f host:; done":  {"machine\tscp  host:"},
		"if then fi (":                       nil,
	} {
		if got := beyondOf("/work/repo", cmd); !slices.Equal(got, want) {
			t.Errorf("%q: %q, want %q", cmd, got, want)
		}
	}
}

// FuzzBeyond: any command line is read without panicking, and every entry
// is of a known kind.
func FuzzBeyond(f *testing.F) {
	f.Add("git push origin main; rm -rf /tmp/x > ../y")
	f.Add("a=$(curl x) && cp \"$a\" ~/b")
	f.Fuzz(func(t *testing.T, cmd string) {
		for _, e := range beyondOf("/work/repo", cmd) {
			kind, _, ok := strings.Cut(e, "\t")
			if !ok || (kind != beyondMachine && kind != beyondOutside) {
				t.Fatalf("entry %q", e)
			}
		}
	})
}
