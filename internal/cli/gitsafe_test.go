package cli

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/providertest"
	"github.com/tiny-agent/tiny-go/internal/testenv"
)

// Issue 40, item 1: a command plants a program in the repository's config
// or attributes; tiny-go's own git (snapshots, git state, bg, rewinds,
// a new start) must never run it. Each planted program appends its attack's
// name to a file outside the tree; the file must stay empty.

// gitAttack is one planted program: plant is the command the model runs,
// with PWN standing for the planted program's path.
type gitAttack struct {
	name  string
	plant string
}

// gitAttacks are the classes of issue 40 item 1, one name each.
var gitAttacks = []gitAttack{
	{"filter-clean", `printf '*.f1 filter=pwn1\n' >> .gitattributes && git config filter.pwn1.clean 'PWN filter-clean' && git config filter.pwn1.smudge 'PWN filter-smudge' && git config filter.pwn1.required true`},
	{"filter-process", `printf '*.f2 filter=pwn2\n' >> .gitattributes && git config filter.pwn2.process 'PWN filter-process'`},
	{"info-attributes", `mkdir -p .git/info && printf '*.f6 filter=pwn6\n' >> .git/info/attributes && git config filter.pwn6.clean 'PWN info-attributes'`},
	{"textconv", `printf '*.f3 diff=pwn3\n' >> .gitattributes && git config diff.pwn3.textconv 'PWN textconv'`},
	{"diff-driver", `printf '*.f4 diff=pwn4\n' >> .gitattributes && git config diff.pwn4.command 'PWN diff-driver'`},
	{"diff-external", `git config diff.external 'PWN diff-external'`},
	{"merge-driver", `printf '*.f5 merge=pwn5\n' >> .gitattributes && git config merge.pwn5.driver 'PWN merge-driver'`},
	{"fsmonitor", `git config core.fsmonitor 'PWN fsmonitor'`},
	{"hooks-path", `mkdir -p .pwn/hooks && for h in reference-transaction post-index-change pre-auto-gc post-checkout post-rewrite pre-commit; do printf '#!/bin/sh\nPWN hooks-path-%s\n' $h > .pwn/hooks/$h; chmod +x .pwn/hooks/$h; done && git config core.hooksPath "$PWD/.pwn/hooks"`},
	{"hooks-dir", `mkdir -p .git/hooks && for h in reference-transaction post-index-change pre-auto-gc; do printf '#!/bin/sh\nPWN hooks-dir-%s\n' $h > .git/hooks/$h; chmod +x .git/hooks/$h; done`},
	{"include-path", `printf '[core]\n\tfsmonitor = "PWN include-path"\n\tpager = "PWN include-pager"\n[diff]\n\texternal = "PWN include-diff"\n' > .pwn/inc.cfg && git config include.path "$PWD/.pwn/inc.cfg"`},
	{"include-if", `printf '[core]\n\tfsmonitor = "PWN include-if"\n' > .pwn/incif.cfg && git config "includeIf.gitdir:/.path" "$PWD/.pwn/incif.cfg"`},
	{"pager", `git config core.pager 'PWN pager' && git config pager.status 'PWN pager-status'`},
	{"editor", `git config core.editor 'PWN editor' && git config sequence.editor 'PWN sequence-editor'`},
	{"ssh-command", `git config core.sshCommand 'PWN ssh-command' && git config core.gitProxy 'PWN git-proxy'`},
	{"credential-helper", `git config credential.helper '!PWN credential-helper' && git config core.askPass 'PWN askpass'`},
	{"gpg", `git config gpg.program 'PWN gpg' && git config gpg.ssh.program 'PWN gpg-ssh' && git config commit.gpgSign true && git config tag.gpgSign true && git config log.showSignature true`},
	{"alias", `git config alias.add '!PWN alias-add' && git config alias.update-ref '!PWN alias-update-ref' && git config alias.read-tree '!PWN alias-read-tree'`},
	{"auto-gc", `git config gc.auto 1 && git config gc.autoPackLimit 1 && git config maintenance.auto true`},
	{"alternate-refs", `git config core.alternateRefsCommand 'PWN alternate-refs'`},
	{"lazy-fetch", `git config core.repositoryformatversion 1 && git config extensions.partialClone pwnremote && git config remote.pwnremote.url "$PWD" && git config remote.pwnremote.promisor true && git config remote.pwnremote.uploadpack 'PWN lazy-fetch' && git config protocol.file.allow always`},
	{"ext-remote", `git config remote.pwnext.url 'ext::PWN ext-remote' && git config remote.pwnext.promisor true && git config protocol.ext.allow always && git config protocol.allow always`},
	{"nested-repo", `mkdir -p nested && cd nested && git init -q && git config core.fsmonitor 'PWN nested-fsmonitor' && git config filter.n.clean 'PWN nested-filter' && printf '* filter=n\n' > .gitattributes && echo n > n.txt`},
}

// gitSafeCase runs the attacks as uid (0: root).
func gitSafeCase(t *testing.T, uid int) {
	base, err := os.MkdirTemp("", "gitsafe-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	os.Chmod(base, 0o755)
	dir, home, marks := filepath.Join(base, "work"), filepath.Join(base, "home"), filepath.Join(base, "marks")
	for _, d := range []string{dir, home, marks} {
		os.Mkdir(d, 0o755)
	}
	seedRepo(t, dir)
	// The planted program: outside every sandbox it could write marks/.
	pwn := filepath.Join(dir, ".pwn", "pwn.sh")
	ran := filepath.Join(marks, "ran")
	script := "mkdir -p .pwn && cat > .pwn/pwn.sh <<'EOF'\n#!/bin/sh\n" +
		"echo \"$1 $(grep NoNewPrivs /proc/self/status | tr -s '\\t' ' ')\" >> " + ran + "\n" +
		"case \"$1\" in filter*|textconv*|*-filter) exec cat;; esac\nexit 0\nEOF\nchmod +x .pwn/pwn.sh"
	calls := []string{script}
	for _, a := range gitAttacks {
		calls = append(calls, strings.ReplaceAll(a.plant, "PWN", pwn))
	}
	// Files each attribute names, changed by a later command.
	calls = append(calls, "for e in f1 f2 f3 f4 f5 f6; do echo one > a.$e; done")
	prog := programAs(t, "tiny-go")
	if uid != 0 {
		prog = copyProgram(t, prog, base)
		if out, err := exec.Command("chown", "-R", fmt.Sprintf("%d:%d", uid, uid), base).CombinedOutput(); err != nil {
			t.Fatalf("chown: %v %s", err, out)
		}
	}
	os.Chmod(marks, 0o777)
	turn2 := []string{
		"for e in f1 f2 f3 f4 f5 f6; do echo two >> a.$e; done && echo new > b.f1",
		"rm .git/refs/heads/feature",
	}
	run := func(calls []string, bg bool, args ...string) string {
		var replies []providertest.Reply
		for i, c := range calls {
			replies = append(replies, providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall(fmt.Sprintf("c%d", i+1), "bash", mustJSON(t, map[string]string{"command": c}))}})
		}
		if bg {
			replies = append(replies, providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("bg1", "bg", mustJSON(t, map[string]string{"action": "start", "command": "sleep 1"}))}})
		}
		srv := providertest.New(t, append(replies, providertest.Reply{Text: "done"})...)
		cmd := exec.Command(prog, append([]string{"--cwd", dir}, args...)...)
		cmd.Env = []string{childEnv + "=1", "OTEL_SDK_DISABLED=true", "OPENROUTER_API_KEY=test-key", "TINY_ENDPOINT=" + srv.URL(),
			"HOME=" + home, "PATH=" + os.Getenv("PATH"), "GIT_CONFIG_NOSYSTEM=1"}
		testenv.AsUser(cmd, uid)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("tiny-go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	run(calls, true, "plant")
	if data, err := os.ReadFile(filepath.Join(dir, ".git", "config")); err != nil || !strings.Contains(string(data), "pwn1") {
		t.Fatalf("the planting did not reach the repository: %v\n%s", err, data)
	}
	run(turn2, true, "--continue", "change")
	id := onlySession(t, dir)
	out := run(nil, false, "session", "rewind", id, "--turn", "2", "--files-only")
	if _, err := os.Lstat(filepath.Join(dir, ".git", "refs", "heads", "feature")); err != nil {
		t.Errorf("the rewind of turn 2 did not put the branch back: %v\n%s", err, out)
	}
	// Snapshots hold the bytes of the files, no filter applied.
	if data, err := os.ReadFile(filepath.Join(dir, "a.f1")); err != nil || string(data) != "one\n" {
		t.Errorf("the rewind of turn 2 left a.f1 %q (%v), want %q\n%s", data, err, "one\n", out)
	}
	if _, err := os.Lstat(filepath.Join(dir, "b.f1")); err == nil {
		t.Errorf("the rewind of turn 2 left b.f1\n%s", out)
	}
	out = run(nil, false, "session", "rewind", id, "--turn", "1", "--files-only")
	if data, err := os.ReadFile(filepath.Join(dir, "a.f1")); err == nil {
		t.Errorf("the rewind of turn 1 left a.f1 (%q)\n%s", data, out)
	}
	data, _ := os.ReadFile(ran)
	if len(data) > 0 {
		t.Fatalf("tiny-go ran programs the repository named (attack, NoNewPrivs):\n%s", data)
	}
}

// onlySession is the id of the one session of dir.
func onlySession(t *testing.T, dir string) string {
	t.Helper()
	sessions, _ := filepath.Glob(filepath.Join(dir, ".tiny-agent", "sessions", "*.jsonl"))
	if len(sessions) != 1 {
		t.Fatalf("%d sessions", len(sessions))
	}
	name := filepath.Base(sessions[0])
	return strings.TrimSuffix(name[strings.IndexByte(name, '_')+1:], ".jsonl")
}

// copyProgram copies the test program into base/bin, where another user
// can run it.
func copyProgram(t *testing.T, prog, base string) string {
	t.Helper()
	self, err := os.ReadFile(prog)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(base, "bin", "tiny-go")
	os.Mkdir(filepath.Dir(bin), 0o755)
	if err := os.WriteFile(bin, self, 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

func TestGitRunsNoPlantedProgramRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("runs as root; the unprivileged case is TestGitRunsNoPlantedProgramUser")
	}
	gitSafeCase(t, 0)
}

func TestGitRunsNoPlantedProgramUser(t *testing.T) {
	gitSafeCase(t, testenv.Unprivileged())
}
