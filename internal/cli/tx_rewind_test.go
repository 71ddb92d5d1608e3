package cli

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/checkpoint"
	"github.com/tiny-agent/tiny-go/internal/checkpoint/checkpointtest"
	"github.com/tiny-agent/tiny-go/internal/providertest"
	"github.com/tiny-agent/tiny-go/internal/testenv"
)

// The "done when": one turn of destructive commands, rewound byte
// for byte, .git and git-ignored files included, by the real program
// against the scripted model: as root, as an unprivileged user (whose
// commands run in a user namespace), and on the fallback path.

const txNobody = 65534

// destroyingTurn is the turn: three bash calls.
var destroyingTurn = []string{
	"git stash drop && git branch -D feature && git reset --hard HEAD~1",
	"git clean -fdx",
	"chmod -x run.sh && ln -sfn other.txt link && rm -rf src .env",
}

// seedRepo makes a repository with a stash, a branch, two commits, an
// ignored .env (mode 600), an ignored SQLite-like database, node_modules,
// an empty directory, a symlink and an executable.
func seedRepo(t *testing.T, dir string) {
	t.Helper()
	sh := `git init -q -b main && git config user.email t@example.com && git config user.name t &&
printf '.env\n*.db\nnode_modules/\n.tiny-agent/\n' > .gitignore &&
mkdir -p src/pkg && echo 'package main' > src/main.go && echo 'package pkg' > src/pkg/lib.go &&
printf '#!/bin/sh\necho run\n' > run.sh && chmod 755 run.sh && echo other > other.txt && ln -s src/main.go link &&
git add -A && git commit -qm one && echo two >> src/main.go && git commit -qam two &&
git branch feature HEAD~1 && echo stashed >> other.txt && git stash -q &&
printf 'SECRET=1\n' > .env && chmod 600 .env && head -c 3000 /dev/urandom > app.db &&
mkdir -p node_modules/dep/lib empty && for i in $(seq 1 30); do echo $i > node_modules/dep/lib/f$i.js; done`
	cmd := exec.Command("sh", "-c", sh)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("seeding: %v\n%s", err, out)
	}
}

func listingDiff(got, want map[string]string) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(want)) {
		if got[k] != want[k] {
			fmt.Fprintf(&b, "  %s: got %q, want %q\n", k, got[k], want[k])
		}
	}
	for _, k := range slices.Sorted(maps.Keys(got)) {
		if _, ok := want[k]; !ok {
			fmt.Fprintf(&b, "  %s: not there before (%q)\n", k, got[k])
		}
	}
	return b.String()
}

type txCase struct {
	uid int      // 0: root
	env []string // extra environment
	// overlay: the working directory is itself an overlay (a fleet
	// worker's workspace), the commands' layers beside it.
	overlay bool
}

// overlayWorkDir makes dir an overlay of what it holds, as a fleet worker
// lays out a workspace on its cached base, and returns the environment
// that puts the commands' own layers beside it.
func overlayWorkDir(t *testing.T, base, dir string) []string {
	t.Helper()
	lower := filepath.Join(base, "lower")
	if err := os.Rename(dir, lower); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{dir, filepath.Join(base, "up"), filepath.Join(base, "ovl")} {
		os.Mkdir(d, 0o755)
	}
	opts := fmt.Sprintf("lowerdir=%s,upperdir=%s/up,workdir=%s/ovl,redirect_dir=on,metacopy=off,index=off", lower, base, base)
	if err := testenv.MountOverlay(dir, opts); err != nil {
		t.Fatalf("mount the working directory's overlay: %v", err)
	}
	t.Cleanup(func() { testenv.Unmount(dir) })
	return []string{"TINY_OVERLAY_LAYERS=" + filepath.Join(base, "layers")}
}

// runDestroyingTurn plays the turn with the program as a subprocess and
// rewinds it; it returns the tree before, after the turn, after the
// rewind, and the turn's and the rewind's outputs.
func runDestroyingTurn(t *testing.T, c txCase) (before, after, rewound map[string]string, turnErr, rewindOut string, recs []checkpoint.Record) {
	var replies []providertest.Reply
	for i, cmd := range destroyingTurn {
		replies = append(replies, providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall(fmt.Sprintf("c%d", i+1), "bash", fmt.Sprintf("{\"command\":%q}", cmd))}})
	}
	srv := providertest.New(t, append(replies, providertest.Reply{Text: "done"})...)
	base, err := os.MkdirTemp("", "tx-rewind-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	os.Chmod(base, 0o755)
	dir, home := filepath.Join(base, "work"), filepath.Join(base, "home")
	os.Mkdir(dir, 0o755)
	os.Mkdir(home, 0o755)
	seedRepo(t, dir)
	if c.overlay {
		c.env = append(c.env, overlayWorkDir(t, base, dir)...)
	}
	prog := programAs(t, "tiny-go")
	if c.uid != 0 {
		// The program must be reachable by the user: a copy in base.
		self, err := os.ReadFile(prog)
		if err != nil {
			t.Fatal(err)
		}
		bin := filepath.Join(base, "bin", "tiny-go")
		os.Mkdir(filepath.Dir(bin), 0o755)
		if err := os.WriteFile(bin, self, 0o755); err != nil {
			t.Fatal(err)
		}
		prog = bin
		if out, err := exec.Command("chown", "-R", fmt.Sprintf("%d:%d", c.uid, c.uid), base).CombinedOutput(); err != nil {
			t.Fatalf("chown: %v %s", err, out)
		}
	}
	run := func(args ...string) (string, error) {
		cmd := exec.Command(prog, append([]string{"--cwd", dir}, args...)...)
		cmd.Env = []string{childEnv + "=1", "OTEL_SDK_DISABLED=true", "OPENROUTER_API_KEY=test-key", "TINY_ENDPOINT=" + srv.URL(),
			"HOME=" + home, "PATH=" + os.Getenv("PATH"), "GIT_CONFIG_NOSYSTEM=1"}
		cmd.Env = append(cmd.Env, c.env...)
		if c.uid != 0 {
			testenv.AsUser(cmd, c.uid)
		}
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	before = checkpointtest.Listing(t, dir)
	lastGitStates[0] = gitState(t, dir)
	out, err := run("destroy everything")
	if err != nil {
		t.Fatalf("the turn: %v\n%s", err, out)
	}
	turnErr = out
	after = checkpointtest.Listing(t, dir)
	sessions, _ := filepath.Glob(filepath.Join(dir, ".tiny-agent", "sessions", "*.jsonl"))
	if len(sessions) != 1 {
		t.Fatalf("%d sessions", len(sessions))
	}
	recs, err = rawIndex(filepath.Join(strings.TrimSuffix(sessions[0], ".jsonl")+".d", checkpoint.IndexFile))
	if err != nil {
		t.Fatal(err)
	}
	name := filepath.Base(sessions[0])
	id := strings.TrimSuffix(name[strings.IndexByte(name, '_')+1:], ".jsonl")
	rewindOut, err = run("session", "rewind", id, "--turn", "1", "--files-only")
	if err != nil {
		t.Fatalf("rewind: %v\n%s", err, rewindOut)
	}
	lastGitStates[1] = gitState(t, dir)
	return before, after, checkpointtest.Listing(t, dir), turnErr, rewindOut, recs
}

// lastGitStates are gitState before the turn and after the rewind of the
// last runDestroyingTurn.
var lastGitStates [2]string

// gitState is what git says of HEAD, the branches and tags, the stash
// list and the index.
func gitState(t *testing.T, dir string) string {
	t.Helper()
	cmd := exec.Command("sh", "-c", "git rev-parse HEAD && git for-each-ref --format='%(refname) %(objectname)' refs/heads refs/tags refs/stash && git stash list --format=%H && git ls-files -s")
	cmd.Dir = dir
	// The tree may belong to another user (the user-namespace case).
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=safe.directory", "GIT_CONFIG_VALUE_0=*")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git state: %v\n%s", err, out)
	}
	return string(out)
}

func checkTurnDestroyed(t *testing.T, before, after map[string]string) {
	t.Helper()
	for _, p := range []string{".env", "app.db", "node_modules/dep/lib/f1.js", "empty", "src/main.go", ".git/refs/heads/feature", ".git/refs/stash"} {
		if _, ok := after[p]; ok {
			t.Fatalf("the turn did not run as scripted: %s is still there", p)
		}
		if _, ok := before[p]; !ok {
			t.Fatalf("the seed has no %s", p)
		}
	}
}

func TestDestroyingTurnIsRewoundByteForByte(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is needed")
	}
	cases := map[string]txCase{"root": {}, "userns": {uid: txNobody}, "root/workdir-is-an-overlay": {overlay: true}}
	if os.Geteuid() != 0 {
		// Unprivileged already: the user-namespace case as ourselves
		// (uid 0 here: no switch); the others need root.
		cases = map[string]txCase{"userns": {}}
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			before, after, rewound, turnOut, out, recs := runDestroyingTurn(t, c)
			checkTurnDestroyed(t, before, after)
			if strings.Contains(turnOut, "without an overlay") {
				t.Fatalf("fell back: %s", turnOut)
			}
			txs := 0
			for _, r := range recs {
				if r.Tx != "" {
					txs++
				}
			}
			if txs != 2*len(destroyingTurn) {
				t.Fatalf("%d transaction records, want %d: %+v", txs, 2*len(destroyingTurn), recs)
			}
			if d := listingDiff(rewound, before); d != "" {
				t.Fatalf("after the rewind:\n%s\nrewind said:\n%s", d, out)
			}
			if lastGitStates[0] != lastGitStates[1] {
				t.Fatalf("git state after the rewind:\n%s\nwant\n%s", lastGitStates[1], lastGitStates[0])
			}
			if strings.Contains(out, "skip ") {
				t.Fatalf("the rewind skipped something:\n%s", out)
			}
			// It says so in words: git's by branch, files by path.
			for _, want := range []string{"brought back branch feature", "brought back the stash", "put branch main back at ", "created   src/main.go", "created   node_modules/ (and "} {
				if !strings.Contains(out, want) {
					t.Errorf("the rewind's report lacks %q:\n%s", want, out)
				}
			}
			if strings.Contains(out, ".git/") {
				t.Errorf("the rewind's report names git's files:\n%s", out)
			}
		})
	}
}

// Where commands cannot run over an overlay (here: TINY_OVERLAY=off; the
// kernel's refusals take the same path), one line says so, and the
// watcher's checkpoints still rewind what they see (git state and ignored
// files on this path: branch lostwork-store).
func TestDestroyingTurnOnTheFallbackPath(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is needed")
	}
	before, _, rewound, turnOut, out, recs := runDestroyingTurn(t, txCase{env: []string{"TINY_OVERLAY=off"}})
	gitBefore, gitAfter := lastGitStates[0], lastGitStates[1]
	if n := strings.Count(turnOut, "tiny-go: commands run without an overlay (TINY_OVERLAY=off)"); n != 1 {
		t.Fatalf("the fallback line %d times:\n%s", n, turnOut)
	}
	for _, r := range recs {
		if r.Tx != "" {
			t.Fatalf("a transaction on the fallback path: %+v", r)
		}
	}
	// The watcher path restores git state as git sees it (refs, stash,
	// index) rather than .git's bytes, and files but not empty
	// directories.
	outsideGit := func(l map[string]string) map[string]string {
		m := map[string]string{}
		for k, v := range l {
			if k != ".git" && !strings.HasPrefix(k, ".git/") && k != "empty" {
				m[k] = v
			}
		}
		return m
	}
	if d := listingDiff(outsideGit(rewound), outsideGit(before)); d != "" {
		t.Fatalf("after the rewind on the fallback path:\n%s\nrewind said:\n%s", d, out)
	}
	if gitBefore != gitAfter {
		t.Fatalf("git state after the rewind:\n%s\nwant\n%s", gitAfter, gitBefore)
	}
}

// A rewind names, one line per kind, what commands did beyond the
// working directory: writes elsewhere, effects beyond the machine.
func TestRewindNamesWhatItCannotUndo(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "outside.txt")
	srv := providertest.New(t,
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c1", "bash", fmt.Sprintf(`{"command":"echo x > in.txt && echo y > %s; git push origin main 2>/dev/null; true"}`, outside))}},
		providertest.Reply{Text: "done"},
	)
	c := newCLI(t, srv)
	if code, _, stderr := c.main("", "go"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	out := c.rewind(sessionID(t, c), "--turn", "1", "--files-only")
	for _, want := range []string{
		"warning   paths outside the working directory are not put back: > " + outside,
		"warning   effects outside the machine cannot be undone: git push origin main",
		"deleted   in.txt",
	} {
		if !strings.Contains(out, want) {
			t.Fatalf("missing %q in:\n%s", want, out)
		}
	}
}

// --approval review: the command runs against its private view; its
// changes are shown, and reach the tree only when accepted.
func TestReviewShowsChangesAndAppliesOnlyOnAccept(t *testing.T) {
	const cmd = "rm keep.txt && echo new > new.txt && echo more >> doc.md"
	for _, answer := range []string{"n\n", "y\n", "esc\n"} {
		t.Run(strings.TrimSpace(answer), func(t *testing.T) {
			srv := providertest.New(t,
				providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c1", "bash", fmt.Sprintf("{\"command\":%q}", cmd))}},
				providertest.Reply{Text: "done"},
			)
			c := newCLI(t, srv)
			c.write("keep.txt", "keep\n")
			c.write("doc.md", "doc\n")
			before := checkpointtest.Listing(t, c.dir)
			code, _, stderr := c.main(answer, "--approval", "review", "go")
			for _, want := range []string{"Apply what this command changed", "$ " + cmd, "deleted   keep.txt", "added     new.txt", "+new", "changed   doc.md", "+more"} {
				if !strings.Contains(stderr, want) {
					t.Fatalf("the review lacks %q:\n%s", want, stderr)
				}
			}
			after := checkpointtest.Listing(t, c.dir)
			if answer == "y\n" {
				if code != 0 {
					t.Fatalf("exit %d: %s", code, stderr)
				}
				if _, ok := after["new.txt"]; !ok || after["keep.txt"] != "" {
					t.Fatalf("accepted changes did not land: %v", after)
				}
				return
			}
			if d := listingDiff(after, before); d != "" {
				t.Fatalf("%q: the tree changed:\n%s", answer, d)
			}
			if answer == "n\n" {
				reqs := srv.Requests()
				if len(reqs) < 2 || !strings.Contains(fmt.Sprint(reqs[1].Chat.Messages), "The user did not apply this command's changes") {
					t.Fatalf("the model was not told: %+v", reqs)
				}
			}
		})
	}
}

// A bg process runs on the tree itself (the watcher's path) and writes a
// file that a bash command, running over its overlay at the same time,
// writes too: the bg version stays, the command's is kept aside and the
// model is told; a rewind of the turn undoes both.
func TestBgWritesWhileACommandRunsOverItsOverlay(t *testing.T) {
	// The two meet through files outside the working directory: an
	// overlay may not show entries added to its lower layer after it
	// looked them up.
	marks := t.TempDir()
	bg := fmt.Sprintf(`while [ ! -e %s/started ]; do sleep 0.02; done; echo from-bg > shared.txt; echo bg > bg.txt; touch %s/written`, marks, marks)
	bash := fmt.Sprintf(`echo from-bash > shared.txt && touch %s/started && while [ ! -e %s/written ]; do sleep 0.02; done; echo x > b.txt`, marks, marks)
	srv := providertest.New(t,
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c1", "bg", mustJSON(t, map[string]string{"action": "start", "command": bg}))}},
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c2", "bash", fmt.Sprintf("{\"command\":%q}", bash))}},
		providertest.Reply{Text: "done"},
	)
	c := newCLI(t, srv)
	c.env["TINY_TX"] = "overlay" // journaled, both write the tree itself: no conflict
	c.write("shared.txt", "seed\n")
	before := checkpointtest.Listing(t, c.dir)
	if code, _, stderr := c.main("", "go"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if data, _ := os.ReadFile(filepath.Join(c.dir, "shared.txt")); string(data) != "from-bg\n" {
		t.Fatalf("shared.txt = %q: the other writer's version must stay", data)
	}
	if _, err := os.Stat(filepath.Join(c.dir, "b.txt")); err != nil {
		t.Fatalf("the command's other change was not applied: %v", err)
	}
	reqs := srv.Requests()
	if got := fmt.Sprint(reqs[len(reqs)-1].Chat.Messages); !strings.Contains(got, "Not applied: shared.txt (the command's version is in ") {
		t.Fatalf("the model was not told of the conflict: %s", got)
	}
	out := c.rewind(sessionID(t, c), "--turn", "1", "--files-only")
	if d := listingDiff(checkpointtest.Listing(t, c.dir), before); d != "" {
		t.Fatalf("after the rewind:\n%s\n%s", d, out)
	}
}

// A command that changes nothing leaves nothing behind: no transaction
// directory, nothing pending.
func TestCommandThatChangesNothingLeavesNoTransaction(t *testing.T) {
	srv := providertest.New(t,
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c1", "bash", `{"command":"ls -la && cat a.txt"}`)}},
		providertest.Reply{Text: "done"},
	)
	c := newCLI(t, srv)
	c.write("a.txt", "a\n")
	if code, _, stderr := c.main("", "look"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	entries, _ := os.ReadDir(filepath.Join(c.dir, ".tiny-agent", "checkpoints", "tx"))
	for _, e := range entries {
		if e.Name() != "pending" && e.Name() != "journal-pending" { // over an overlay, journaled
			t.Fatalf("a transaction directory was left: %s", e.Name())
		}
		if pending, _ := os.ReadDir(filepath.Join(c.dir, ".tiny-agent", "checkpoints", "tx", e.Name())); len(pending) != 0 {
			t.Fatalf("%s: %v", e.Name(), pending)
		}
	}
	if len(entries) == 0 {
		t.Fatal("no transaction ran at all")
	}
}

// The originals a transaction keeps count against TINY_CHECKPOINT_CAP:
// past it, the oldest transactions go with the oldest checkpoints, and a
// rewind that needed them says so.
func TestKeptOriginalsAreEvictedPastTheCap(t *testing.T) {
	var replies []providertest.Reply
	for i := 1; i <= 3; i++ {
		replies = append(replies, providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall(fmt.Sprintf("c%d", i), "bash", fmt.Sprintf(`{"command":"rm big%d"}`, i))}})
	}
	srv := providertest.New(t, append(replies, providertest.Reply{Text: "done"})...)
	c := newCLI(t, srv)
	c.env["TINY_CHECKPOINT_CAP"] = "250KiB"
	for i := 1; i <= 3; i++ {
		c.write(fmt.Sprintf("big%d", i), strings.Repeat(fmt.Sprint(i), 100<<10))
	}
	if code, _, stderr := c.main("", "delete them"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	entries, _ := os.ReadDir(filepath.Join(c.dir, ".tiny-agent", "checkpoints", "tx"))
	var kept []string
	for _, e := range entries {
		if e.Name() != "pending" {
			kept = append(kept, e.Name())
		}
	}
	if len(kept) != 2 {
		t.Fatalf("%d transactions kept, want the newest 2 (100 KiB each under a 250 KiB cap)", len(kept))
	}
	// The turn's first checkpoint is gone, so nothing is known of the
	// tree before it: the rewind puts nothing back and says why.
	out := c.rewind(sessionID(t, c), "--turn", "1", "--files-only")
	if !strings.Contains(out, "(dropped to keep the checkpoint store under its cap): what it changed cannot be put back") {
		t.Fatalf("the rewind does not say what was dropped:\n%s", out)
	}
	// session show says the cap dropped some, and from when.
	code, show, stderr := c.main("", "session", "show", sessionID(t, c))
	if code != 0 || !strings.Contains(show, "were dropped to stay under the cap") || !strings.Contains(show, "250.0 KiB cap") {
		t.Fatalf("session show (exit %d) does not say what the cap dropped:\n%s%s", code, show, stderr)
	}
}

// rawIndex reads an index's records without checking their seals: the
// program ran with its HOME's key (and as another user), not the tests'.
func rawIndex(path string) ([]checkpoint.Record, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var recs []checkpoint.Record
	for line := range strings.SplitSeq(strings.TrimSuffix(string(data), "\n"), "\n") {
		var r checkpoint.Record
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			return nil, err
		}
		recs = append(recs, r)
	}
	return recs, nil
}
