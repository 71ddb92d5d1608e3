package cli

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tiny-agent/tiny-go/internal/checkpoint/checkpointtest"
	"github.com/tiny-agent/tiny-go/internal/providertest"
)

// destructiveTurn is the turn of issue 28: git stash drop, git branch -D,
// git reset --hard, git clean -fdx, chmod -x, a symlink replaced, rm -rf
// of a directory and a git-ignored file; and a push and a path outside
// the working directory, which no rewind can undo.
var destructiveTurn = []string{
	"git stash drop -q && git branch -q -D feature && git reset -q --hard HEAD~1",
	"git clean -fdxq",
	"chmod -x run.sh",
	"rm link && ln -s run.sh link",
	"rm -rf src .env",
	"git push origin main 2>/dev/null; rm -f /nonexistent-tiny-go/x; true",
}

// seedDestructiveRepo makes a repository with what the turn destroys:
// two stashes, a branch, a tag, commits, staged and unstaged changes,
// untracked and git-ignored files (.env, a database, node_modules), an
// executable and a symlink.
func seedDestructiveRepo(t *testing.T, dir string) {
	t.Helper()
	checkpointtest.Sh(t, dir, `set -e
git init -q -b main
printf '.env\nnode_modules/\n*.db\n' > .gitignore
mkdir -p src/lib && echo 'package main' > src/main.go && echo 'package lib' > src/lib/util.go
printf '#!/bin/sh\necho run\n' > run.sh && chmod +x run.sh && ln -s src/main.go link
git add -A && git commit -qm one
git checkout -q -b feature && echo f > f.txt && git add f.txt && git commit -qm feat && git checkout -q main
echo 'package main // two' > src/main.go && git commit -qam two && git tag v2
echo wip1 >> run.sh && git stash -q && echo wip2 >> run.sh && git stash -q
echo 'SECRET=1' > .env && printf 'sqlite\0db' > data.db
mkdir -p node_modules/dep/lib && echo 'module.exports=1' > node_modules/dep/index.js && echo x > node_modules/dep/lib/x.js
echo 'notes' > notes.txt
echo 'staged' >> src/lib/util.go && git add src/lib/util.go
echo 'dirty' >> run.sh`)
}

// repoState is what the turn changes in .git: HEAD, the refs (but the
// private keep refs), the stash list and the index, byte for byte.
func repoState(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	git := func(args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		b, err := cmd.Output()
		if err != nil {
			t.Fatalf("git %v: %v", args, err)
		}
		return string(b)
	}
	var refs []string
	for _, l := range strings.Split(git("for-each-ref", "--format=%(objectname) %(refname)"), "\n") {
		if !strings.Contains(l, "refs/tiny-agent/") {
			refs = append(refs, l)
		}
	}
	out["refs"] = strings.Join(refs, "\n")
	out["HEAD"] = git("symbolic-ref", "HEAD") + git("rev-parse", "HEAD")
	out["stash list"] = git("stash", "list", "--format=%H %gs")
	for _, f := range []string{".git/index", ".git/logs/refs/stash"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		out[f] = string(b)
	}
	return out
}

// runDestructiveTurn seeds the repository and plays the turn in a
// one-shot run; it returns the files and the git state before the turn.
func runDestructiveTurn(t *testing.T) (c *cliRun, files, git map[string]string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	var replies []providertest.Reply
	for i, cmd := range destructiveTurn {
		args, _ := json.Marshal(map[string]string{"command": cmd})
		replies = append(replies, providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c"+strconv.Itoa(i+1), "bash", string(args))}})
	}
	replies = append(replies, providertest.Reply{Text: "done"})
	c = newCLI(t, providertest.New(t, replies...))
	c.env["TINY_OVERLAY"] = "off" // the watcher path (the overlay's: tx_rewind_test.go)
	seedDestructiveRepo(t, c.dir)
	files, git = checkpointtest.TreeDigests(t, c.dir), repoState(t, c.dir)
	if code, _, stderr := c.main("", "destroy everything"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	after := checkpointtest.TreeDigests(t, c.dir)
	for _, gone := range []string{".env", "data.db", "node_modules/dep/index.js", "src/main.go", "notes.txt"} {
		if _, ok := after[gone]; ok {
			t.Fatalf("the turn did not run as scripted: %s is still there", gone)
		}
	}
	if maps.Equal(repoState(t, c.dir), git) {
		t.Fatal("the turn did not change the git state")
	}
	return c, files, git
}

// The turn of issue 28 on the watcher path is rewound byte for byte:
// every file (git-ignored ones included, modes and symlinks) and the git
// state; what cannot come back is named, one line per kind.
func TestRewindDestructiveTurnOnTheWatcherPath(t *testing.T) {
	c, files, git := runDestructiveTurn(t)
	out := c.rewind(sessionID(t, c), "--turn", "1", "--files-only")
	if got := checkpointtest.TreeDigests(t, c.dir); !maps.Equal(got, files) {
		t.Errorf("files after the rewind:\n%v\nwant\n%v\noutput:\n%s", got, files, out)
	}
	if got := repoState(t, c.dir); !maps.Equal(got, git) {
		for k := range git {
			if got[k] != git[k] {
				t.Errorf("%s after the rewind:\n%q\nwant\n%q", k, got[k], git[k])
			}
		}
		t.Fatalf("output:\n%s", out)
	}
	for _, want := range []string{
		"created   git refs/heads/feature",
		"restored  git refs/heads/main",
		"restored  git stash list",
		"restored  git index",
		"warning   effects outside the machine cannot be undone: git push origin main",
		"warning   paths outside the working directory are not put back: rm -f /nonexistent-tiny-go/x",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the rewind does not say %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "  skip ") {
		t.Errorf("the rewind skipped something:\n%s", out)
	}
	// .tiny-agent survived git clean -fdx as a nested repository that
	// git add -A and git status do not meet.
	checkpointtest.Sh(t, c.dir, "git add -A --dry-run >/dev/null && ! git status --porcelain | grep -q tiny-agent")
	// The objects the turn dropped are kept reachable from a gc.
	checkpointtest.Sh(t, c.dir, "git reflog expire --expire=now --all && git gc -q --prune=now && git fsck --no-dangling --connectivity-only")
}

// A rewind of the destructive turn killed (SIGKILL) after each of its
// steps, files and git state alike, is finished by running it again: the
// files and the git state end byte for byte as before the turn.
func TestDestructiveRewindSurvivesSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("plays the turn once per kill point")
	}
	paused := programAs(t, "tiny-go-rewind-pause")
	prog := programAs(t, "tiny-go")
	for k := 1; k < 40; k++ {
		c, files, git := runDestructiveTurn(t)
		id := sessionID(t, c)
		pauseFile := filepath.Join(t.TempDir(), "paused")
		cmd := exec.Command(paused, "--cwd", c.dir, "session", "rewind", id, "--turn", "1", "--files-only")
		cmd.Env = append(os.Environ(), childEnv+"=1", "OTEL_SDK_DISABLED=true", rewindPauseEnv+"="+strconv.Itoa(k)+":"+pauseFile)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		pausedAt := false
		for deadline := time.Now().Add(15 * time.Second); !pausedAt; time.Sleep(5 * time.Millisecond) {
			if _, err := os.Stat(pauseFile); err == nil {
				pausedAt = true
				break
			}
			select {
			case <-exited:
			default:
				if time.Now().Before(deadline) {
					continue
				}
				t.Fatal("the rewind neither paused nor ended")
			}
			break
		}
		if !pausedAt {
			if k < 10 {
				t.Fatalf("the rewind ended before its step %d", k)
			}
			t.Logf("killed after each of %d steps", k-1)
			return // k is past the last step: every step was killed after
		}
		_ = cmd.Process.Signal(syscall.SIGKILL)
		<-exited
		rerun := exec.Command(prog, "--cwd", c.dir, "session", "rewind", id, "--turn", "1", "--files-only")
		rerun.Env = append(os.Environ(), childEnv+"=1", "OTEL_SDK_DISABLED=true")
		out, err := rerun.CombinedOutput()
		if err != nil {
			t.Fatalf("kill after step %d, rerun: %v\n%s", k, err, out)
		}
		if got := checkpointtest.TreeDigests(t, c.dir); !maps.Equal(got, files) {
			t.Fatalf("kill after step %d: files\n%v\nwant\n%v\n%s", k, got, files, out)
		}
		if got := repoState(t, c.dir); !maps.Equal(got, git) {
			t.Fatalf("kill after step %d: git state differs\n%s", k, out)
		}
	}
	t.Fatal("the rewind never ended")
}

// A command that deletes node_modules over the overlay costs the store no
// copy: the directory is moved into it whole (same inodes), and a rewind
// moves nothing back by copying either: the files come back.
func TestDeletedNodeModulesIsMovedNotCopied(t *testing.T) {
	c := newCLI(t, providertest.New(t, bashCall(t, "rm -rf node_modules"), providertest.Reply{Text: "done"}))
	for i := range 50 {
		c.write(fmt.Sprintf("node_modules/p%d/index.js", i), strings.Repeat("x", i))
	}
	var st syscall.Stat_t
	if err := syscall.Lstat(filepath.Join(c.dir, "node_modules/p7/index.js"), &st); err != nil {
		t.Fatal(err)
	}
	before := checkpointtest.TreeDigests(t, c.dir)
	code, _, stderr := c.main("", "delete node_modules")
	if code != 0 || strings.Contains(stderr, "without an overlay") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	kept, _ := filepath.Glob(filepath.Join(c.dir, ".tiny-agent", "checkpoints", "tx", "*", "orig", "node_modules", "p7", "index.js"))
	var moved syscall.Stat_t
	if len(kept) != 1 || syscall.Lstat(kept[0], &moved) != nil || moved.Ino != st.Ino {
		t.Fatalf("node_modules was not moved into the store (kept %v, inode %d, want %d)", kept, moved.Ino, st.Ino)
	}
	c.rewind(sessionID(t, c), "--turn", "1", "--files-only")
	if got := checkpointtest.TreeDigests(t, c.dir); !maps.Equal(got, before) {
		t.Fatalf("after the rewind: %v", got)
	}
}

// The nested-repository marker never gets in the way of git add -A: a
// user who drops tiny-go's line from .git/info/exclude gets it back at
// the next run.
func TestStateDirStaysOutOfGitAdd(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	c := newCLI(t, providertest.New(t, bashCall(t, "git clean -fdxq"), providertest.Reply{Text: "done"}, bashCall(t, "true"), providertest.Reply{Text: "done"}))
	c.env["TINY_OVERLAY"] = "off" // git clean runs on the tree itself
	checkpointtest.Sh(t, c.dir, "git init -q && echo a > a && git add a && git commit -qm one")
	for i := range 2 {
		if code, _, stderr := c.main("", "run "+strconv.Itoa(i)); code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		if len(c.sessions()) != i+1 {
			t.Fatalf("run %d: git clean -fdx took the sessions: %v", i, c.sessions())
		}
		checkpointtest.Sh(t, c.dir, "git add -A --dry-run && ! git status --porcelain | grep -q tiny-agent")
		checkpointtest.Sh(t, c.dir, ": > .git/info/exclude") // the user drops the line
	}
}
