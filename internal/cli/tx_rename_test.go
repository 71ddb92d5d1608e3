package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tiny-agent/tiny-go/internal/checkpoint/checkpointtest"
	"github.com/tiny-agent/tiny-go/internal/faultpoint"
	"github.com/tiny-agent/tiny-go/internal/providertest"
	"github.com/tiny-agent/tiny-go/internal/testenv"
)

// Renames of directories in the tree (issue 42): as in plain bash, no
// EXDEV and no copy; the rewind gives the layout back exactly, also after
// a SIGKILL in the apply.

// renameTurn is the turn: git mv of a directory, Python's os.rename of
// one (neither copies on EXDEV), mv of a 50 MB one with a file added.
var renameTurn = []string{
	"git mv src/d07 src/moved07 && echo GIT-MV-OK",
	`python3 -c 'import os; os.rename("d", "e")' && echo OS-RENAME-OK`,
	"mv data data2 && echo extra > data2/extra && echo MV-OK",
}

// renameSeedScript makes a repository with src/d07, an ignored d/ and a
// 50 MB data/ of 50 files.
const renameSeedScript = `git init -q -b main . && git config user.email t@t && git config user.name t &&
mkdir -p src/d07/sub d data && echo a > src/d07/a && echo b > src/d07/sub/b && echo d > d/x &&
for i in $(seq 1 50); do head -c 1048576 /dev/urandom > data/f$i; done && printf 'data/\nd/\n.tiny-agent/\n' > .gitignore &&
git add -A && git commit -qm seed`

// renameRun is one tree, its model and a program run as uid.
type renameRun struct {
	t       *testing.T
	dir     string
	home    string
	prog    string
	uid     int
	srv     *providertest.Server
	ino     uint64 // data/f1's inode before the turn
	before  map[string]string
	session string   // the turn's session file ("": the only one)
	env     []string // more environment for every run
}

func newRenameRun(t *testing.T, uid int, prog, seedScript string) *renameRun {
	return newTurnRun(t, uid, prog, seedScript, renameTurn)
}

// newTurnRun is a tree seeded by seedScript whose model runs turn, one
// bash call each, as uid.
func newTurnRun(t *testing.T, uid int, prog, seedScript string, turn []string) *renameRun {
	var replies []providertest.Reply
	for i, cmd := range turn {
		replies = append(replies, providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall(fmt.Sprint("c", i+1), "bash", mustJSON(t, map[string]string{"command": cmd}))}})
	}
	r := &renameRun{t: t, uid: uid, srv: providertest.New(t, append(replies, providertest.Reply{Text: "done"})...)}
	base, err := os.MkdirTemp("", "tx-rename-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	os.Chmod(base, 0o755)
	r.dir, r.home = filepath.Join(base, "work"), filepath.Join(base, "home")
	os.Mkdir(r.dir, 0o755)
	os.Mkdir(r.home, 0o755)
	r.prog = programAs(t, prog)
	if uid != 0 {
		self, err := os.ReadFile(r.prog)
		if err != nil {
			t.Fatal(err)
		}
		r.prog = filepath.Join(base, "bin", prog)
		os.Mkdir(filepath.Dir(r.prog), 0o755)
		if err := os.WriteFile(r.prog, self, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	seed := exec.Command("sh", "-c", seedScript)
	seed.Dir = r.dir
	if out, err := seed.CombinedOutput(); err != nil {
		t.Fatalf("seeding: %v\n%s", err, out)
	}
	if uid != 0 {
		if out, err := exec.Command("chown", "-R", fmt.Sprintf("%d:%d", uid, uid), base).CombinedOutput(); err != nil {
			t.Fatalf("chown: %v %s", err, out)
		}
	}
	if _, err := os.Lstat(filepath.Join(r.dir, "data/f1")); err == nil {
		r.ino = inodeOf(t, filepath.Join(r.dir, "data/f1"))
	}
	r.before = checkpointtest.Listing(t, r.dir)
	return r
}

func (r *renameRun) cmd(env []string, args ...string) *exec.Cmd {
	cmd := exec.Command(r.prog, append([]string{"--cwd", r.dir}, args...)...)
	cmd.Env = append([]string{childEnv + "=1", "OTEL_SDK_DISABLED=true", "OPENROUTER_API_KEY=test-key", "TINY_ENDPOINT=" + r.srv.URL(),
		"HOME=" + r.home, "PATH=" + os.Getenv("PATH"), "GIT_CONFIG_NOSYSTEM=1"}, append(r.env, env...)...)
	testenv.AsUser(cmd, r.uid)
	return cmd
}

func (r *renameRun) run(args ...string) string {
	r.t.Helper()
	out, err := r.cmd(nil, args...).CombinedOutput()
	if err != nil {
		r.t.Fatalf("tiny-go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// rewind rewinds the turn and checks the tree is as before it.
func (r *renameRun) rewind() {
	r.t.Helper()
	if r.session == "" {
		r.session = r.turnSession()
	}
	out := r.run("session", "rewind", killedSession(r.t, r.dir, r.session), "--turn", "1", "--files-only")
	if d := listingDiff(checkpointtest.Listing(r.t, r.dir), r.before); d != "" {
		r.t.Fatalf("after the rewind:\n%s\nrewind said:\n%s", d, out)
	}
	if strings.Contains(out, "skip ") {
		r.t.Fatalf("the rewind skipped something:\n%s", out)
	}
}

func (r *renameRun) turnSession() string {
	r.t.Helper()
	sessions, _ := filepath.Glob(filepath.Join(r.dir, ".tiny-agent", "sessions", "*.jsonl"))
	if len(sessions) != 1 {
		r.t.Fatalf("%d sessions", len(sessions))
	}
	return sessions[0]
}

// results are the commands' results, as the model was sent them last.
func (r *renameRun) results() string {
	reqs := r.srv.Requests()
	var out []string
	for _, m := range reqs[len(reqs)-1].Chat.Messages {
		if m.Role == "tool" {
			data, _ := json.Marshal(m.Content)
			out = append(out, string(data))
		}
	}
	return strings.Join(out, "\n")
}

func inodeOf(t *testing.T, p string) uint64 {
	t.Helper()
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t).Ino
}

// TestRenamedDirectoryIsARename: as root, git mv and os.rename of a
// directory succeed, mv of 50 MB keeps the same files (inodes) and adds
// no disk to .tiny-agent, and the rewind gives the tree back byte for
// byte. As uid 1000 (a user namespace: no redirect_dir, the kernel
// refuses it with userxattr) a rename of a directory is still a copy:
// mv copies, git mv and os.rename fail with EXDEV, and the rewind is
// exact all the same.
func TestRenamedDirectoryIsARename(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is needed")
	}
	if _, err := exec.LookPath("python3"); err != nil {
		t.Fatal("python3 is needed")
	}
	cases := map[string]int{"root": 0, "uid1000": 1000}
	if os.Geteuid() != 0 {
		cases = map[string]int{"unprivileged": os.Geteuid()}
	}
	for name, uid := range cases {
		t.Run(name, func(t *testing.T) {
			r := newRenameRun(t, uid, "tiny-go", renameSeedScript)
			// Journaled: TestJournaledCommandsBehaveAsPlainBash.
			r.env = []string{"TINY_TX=overlay"}
			du := duOf(t, r.dir) // the tree and .tiny-agent: the kept hard links count once
			r.run("rename the directories")
			grown := duOf(t, r.dir) - du
			res := r.results()
			if !strings.Contains(res, "MV-OK") {
				t.Fatalf("mv failed:\n%s", res)
			}
			if uid != 0 {
				if strings.Contains(res, "GIT-MV-OK") || !strings.Contains(res, "Invalid cross-device link") {
					t.Fatalf("as uid %d git mv of a directory was expected to fail with EXDEV (see docs/checkpoints.md):\n%s", uid, res)
				}
				r.rewind()
				return
			}
			if !strings.Contains(res, "GIT-MV-OK") || !strings.Contains(res, "OS-RENAME-OK") {
				t.Fatalf("a rename failed:\n%s", res)
			}
			if got := inodeOf(t, filepath.Join(r.dir, "data2/f1")); got != r.ino {
				t.Errorf("data2/f1 is a copy (inode %d, was %d)", got, r.ino)
			}
			if grown > 1<<20 {
				t.Errorf("the working directory with .tiny-agent grew by %d bytes for renames of 50 MB", grown)
			}
			t.Logf("the working directory with .tiny-agent grew by %d KB", grown>>10)
			for _, p := range []string{"src/moved07/sub/b", "e/x", "data2/f50", "data2/extra"} {
				if _, err := os.Lstat(filepath.Join(r.dir, p)); err != nil {
					t.Errorf("after the turn: %v", err)
				}
			}
			du, t0 := duOf(t, r.dir), time.Now()
			r.rewind()
			// The rewind copies the kept originals back (they stay, for a
			// rewind of the rewind): the 50 MB are then on disk twice.
			t.Logf("the rewind took %v and added %d KB", time.Since(t0).Round(time.Millisecond), (duOf(t, r.dir)-du)>>10)
		})
	}
}

// TestKilledInARenamedDirectorysApply: tiny-go SIGKILLed in the apply of
// a turn that renames directories, after a mirror is made (before its
// rename) or after a step: the next start finishes the apply (the tree is
// the turn's after), and the rewind gives the tree back exactly.
func TestKilledInARenamedDirectorysApply(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("renames of directories are copies without root (no redirect_dir in a user namespace)")
	}
	for _, at := range []string{faultpoint.TxMirror + ":1", faultpoint.TxStep + ":1", faultpoint.TxStep + ":4"} {
		t.Run(at, func(t *testing.T) {
			r := newRenameRun(t, 0, "tiny-go-killpoint", renameSeedScript)
			r.env = []string{"TINY_TX=overlay"} // the overlay's apply is what is killed
			mark := filepath.Join(t.TempDir(), "mark")
			// Only the last command renames data: kill in its apply.
			r.srv = providertest.New(t, providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c1", "bash", mustJSON(t, map[string]string{"command": "mv data data2 && mv src/d07 src/moved07 && echo new > src/moved07/new && rm data2/f3"}))}},
				providertest.Reply{Text: "done"})
			out, _ := r.cmd([]string{killPointEnv + "=" + at + ":" + mark}, "rename").CombinedOutput()
			if data, err := os.ReadFile(mark); err != nil || !strings.HasPrefix(string(data), strings.Split(at, ":")[0]) {
				t.Fatalf("not killed at %s: %v\n%s", at, err, out)
			}
			r.session = r.turnSession()
			r.srv = providertest.New(t, providertest.Reply{Text: "hello again"})
			r.run("hello")
			for p, want := range map[string]bool{"data2/f1": true, "data/f1": false, "src/moved07/new": true, "data2/f3": false, "src/d07": false} {
				if _, err := os.Lstat(filepath.Join(r.dir, p)); (err == nil) != want {
					t.Errorf("after the next start, %s: %v", p, err)
				}
			}
			if got := inodeOf(t, filepath.Join(r.dir, "data2/f1")); got != r.ino {
				t.Errorf("data2/f1 is a copy (inode %d, was %d)", got, r.ino)
			}
			r.rewind()
		})
	}
}

// duOf is the disk the files below dir take (du: hard links once).
func duOf(t *testing.T, dir string) int64 {
	t.Helper()
	out, err := exec.Command("du", "-sb", dir).Output()
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	fmt.Sscan(string(out), &n)
	return n
}

// TestMovedFileWrittenInPlaceOutsideIsNamed: the kept original of a file
// a command moved with its folder is a hard link to it, so a program
// outside tiny-go that writes the moved file in place (then removes the
// folder) writes the kept original too: the rewind skips that file and
// says why, instead of putting back content that was not the original,
// and puts back the rest.
func TestMovedFileWrittenInPlaceOutsideIsNamed(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("renames of directories are copies without root (no redirect_dir in a user namespace)")
	}
	seed := `mkdir data && echo one > data/f1 && echo two > data/f2`
	// Over the overlay (journaled, a small moved file is kept as a copy).
	tt := runTxTurnThenEnv(t, []string{"TINY_TX=overlay"}, seed, func(dir, _ string) {
		f, err := os.OpenFile(filepath.Join(dir, "data2/f1"), os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString("outside\n")
		f.Close()
		os.RemoveAll(filepath.Join(dir, "data2"))
	}, "mv data data2")
	if !strings.Contains(tt.rewindOut, "skip      data/f1: its earlier content was kept as a hard link") {
		t.Errorf("the rewind did not name data/f1:\n%s", tt.rewindOut)
	}
	if tt.rewound["data/f2"] != tt.before["data/f2"] || tt.rewound["data/f1"] != "" {
		t.Errorf("after the rewind: %v", tt.rewound)
	}
}

// TestKilledDuringMvOfAFolderLeavesOneOfThem: tiny-go SIGKILLed at
// random instants of a turn that moves a folder of 3,000 files: the next
// start finds the folder at its old name or at its new one, whole, never
// both (without redirect_dir the move was a copy, and a kill in it left
// the original and a half copy), and the rewind gives the tree back.
func TestKilledDuringMvOfAFolderLeavesOneOfThem(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("renames of directories are copies without root (no redirect_dir in a user namespace)")
	}
	if testing.Short() {
		t.Skip("kills six turns")
	}
	const files = 3000
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 42))
	var turn time.Duration
	landed := map[string]int{}
	for i := range 7 {
		r := newRenameRun(t, 0, "tiny-go-killpoint", "true")
		for j := range files {
			d := filepath.Join(r.dir, "big", fmt.Sprint("p", j/30))
			os.MkdirAll(d, 0o755)
			os.WriteFile(filepath.Join(d, fmt.Sprint("f", j)), []byte(fmt.Sprintln(j)), 0o644)
		}
		r.before = checkpointtest.Listing(t, r.dir)
		r.srv = providertest.New(t, providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c1", "bash", mustJSON(t, map[string]string{"command": "mv big big2"}))}},
			providertest.Reply{Text: "done"})
		cmd := r.cmd(nil, "move it")
		start := time.Now()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if i > 0 {
			time.Sleep(time.Duration(rng.Int64N(int64(turn))))
			cmd.Process.Signal(syscall.SIGKILL)
		}
		cmd.Wait()
		if i == 0 {
			turn = time.Since(start) // the time scale of the kills
			continue
		}
		sessions, _ := filepath.Glob(filepath.Join(r.dir, ".tiny-agent", "sessions", "*.jsonl"))
		if len(sessions) == 0 || headerOnly(t, sessions[0]) {
			// Killed before its session, or before the prompt was
			// committed: nothing ran (and --continue passes a session
			// that holds only its header by).
			landed["before the turn"]++
			if d := listingDiff(checkpointtest.Listing(t, r.dir), r.before); d != "" {
				t.Fatalf("iteration %d: killed before its session, the tree changed:\n%s", i, d)
			}
			continue
		}
		r.session = sessions[0]
		r.srv = providertest.New(t, providertest.Reply{Text: "hello again"})
		r.run("hello")
		got := checkpointtest.Listing(t, r.dir)
		old, moved := count(got, "big/"), count(got, "big2/")
		switch {
		case old == files+files/30 && moved == 0:
			landed["old name"]++
		case moved == files+files/30 && old == 0:
			landed["new name"]++
		default:
			t.Fatalf("iteration %d: after the next start big/ has %d entries, big2/ %d", i, old, moved)
		}
		r.rewind()
	}
	t.Logf("a whole turn %v; after the kills the folder was at: %v", turn, landed)
}

// headerOnly reports whether the session file at path holds nothing but
// its header line.
func headerOnly(t *testing.T, path string) bool {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return len(bytes.Split(bytes.TrimSpace(b), []byte("\n"))) <= 1
}

func count(listing map[string]string, prefix string) int {
	n := 0
	for p := range listing {
		if strings.HasPrefix(p, prefix) {
			n++
		}
	}
	return n
}
