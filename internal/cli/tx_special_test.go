package cli

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tiny-agent/tiny-go/internal/checkpoint/checkpointtest"
	"github.com/tiny-agent/tiny-go/internal/providertest"
)

// Issue 42's rewind faults, through the real program against the scripted
// model: special files, empty directories and mtimes come back as files
// do.

// txTurn is one turn of bash calls over a seeded tree, then its rewind.
type txTurn struct {
	dir                     string
	before, after, rewound  map[string]string
	mtimesBefore, mtimesNow map[string]int64
	rewindOut               string
}

// mtimes is every entry's modification time below dir but .tiny-agent
// (directories left out: restoring their children changes them).
func mtimes(t *testing.T, dir string) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if rel == ".tiny-agent" {
			return filepath.SkipDir
		}
		if !fi.IsDir() {
			out[rel] = fi.ModTime().UnixNano()
		}
		return nil
	})
	return out
}

// runTxTurn seeds dir with the shell script seed, runs cmds as one turn
// (one bash call each) and rewinds it; a rewind that takes over a minute
// fails the test (a FIFO opened for reading waits forever).
func runTxTurn(t *testing.T, seed string, cmds ...string) txTurn {
	t.Helper()
	return runTxTurnThen(t, seed, nil, cmds...)
}

// runTxTurnThen is runTxTurn with between run on the working directory
// after the turn, before the rewind (a fault left by a killed process);
// home is the HOME the turn ran with (its state key).
func runTxTurnThen(t *testing.T, seed string, between func(dir, home string), cmds ...string) txTurn {
	t.Helper()
	return runTxTurnThenEnv(t, nil, seed, between, cmds...)
}

// runTxTurnThenEnv is runTxTurnThen with more environment for tiny-go.
func runTxTurnThenEnv(t *testing.T, env []string, seed string, between func(dir, home string), cmds ...string) txTurn {
	t.Helper()
	var replies []providertest.Reply
	for i, cmd := range cmds {
		replies = append(replies, providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall(fmt.Sprintf("c%d", i+1), "bash", mustJSON(t, map[string]string{"command": cmd}))}})
	}
	srv := providertest.New(t, append(replies, providertest.Reply{Text: "done"})...)
	base := t.TempDir()
	tt := txTurn{dir: filepath.Join(base, "work")}
	home := filepath.Join(base, "home")
	os.Mkdir(tt.dir, 0o755)
	os.Mkdir(home, 0o755)
	sh := exec.Command("sh", "-c", seed)
	sh.Dir = tt.dir
	if out, err := sh.CombinedOutput(); err != nil {
		t.Fatalf("seeding: %v\n%s", err, out)
	}
	prog := programAs(t, "tiny-go")
	run := func(args ...string) string {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, prog, append([]string{"--cwd", tt.dir}, args...)...)
		cmd.Env = []string{childEnv + "=1", "OTEL_SDK_DISABLED=true", "OPENROUTER_API_KEY=test-key", "TINY_ENDPOINT=" + srv.URL(),
			"HOME=" + home, "PATH=" + os.Getenv("PATH"), "GIT_CONFIG_NOSYSTEM=1"}
		cmd.Env = append(cmd.Env, env...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
		out, err := cmd.CombinedOutput()
		if ctx.Err() != nil {
			t.Fatalf("tiny-go %s hung (killed after a minute)\n%s", strings.Join(args, " "), out)
		}
		if err != nil {
			t.Fatalf("tiny-go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	tt.before, tt.mtimesBefore = checkpointtest.Listing(t, tt.dir), mtimes(t, tt.dir)
	run("run the commands")
	tt.after = checkpointtest.Listing(t, tt.dir)
	if between != nil {
		between(tt.dir, home)
	}
	sessions, _ := filepath.Glob(filepath.Join(tt.dir, ".tiny-agent", "sessions", "*.jsonl"))
	if len(sessions) != 1 {
		t.Fatalf("%d sessions", len(sessions))
	}
	name := filepath.Base(sessions[0])
	id := strings.TrimSuffix(name[strings.IndexByte(name, '_')+1:], ".jsonl")
	tt.rewindOut = run("session", "rewind", id, "--turn", "1", "--files-only")
	tt.rewound, tt.mtimesNow = checkpointtest.Listing(t, tt.dir), mtimes(t, tt.dir)
	return tt
}

// TestRewindBringsBackFIFOsAndSockets: a turn that makes a FIFO and a
// socket and deletes the ones there were is rewound without opening any
// of them: the deleted ones come back, the new ones go.
func TestRewindBringsBackFIFOsAndSockets(t *testing.T) {
	seed := `mkfifo old.fifo && chmod 640 old.fifo &&
perl -MIO::Socket::UNIX -e 'IO::Socket::UNIX->new(Type=>SOCK_STREAM(),Local=>"old.sock",Listen=>1) or die $!' &&
mkdir d && mkfifo d/deep.fifo && echo text > f.txt`
	tt := runTxTurn(t, seed,
		"mkfifo p && rm old.fifo old.sock",
		`perl -MIO::Socket::UNIX -e 'IO::Socket::UNIX->new(Type=>SOCK_STREAM(),Local=>"new.sock",Listen=>1) or die $!' && rm -r d && echo changed > f.txt`)
	for _, p := range []string{"p", "new.sock"} {
		if _, ok := tt.after[p]; !ok {
			t.Fatalf("the turn did not run as scripted: no %s\n%v", p, tt.after)
		}
	}
	if _, ok := tt.after["old.fifo"]; ok {
		t.Fatalf("the turn did not run as scripted: old.fifo is there")
	}
	if d := listingDiff(tt.rewound, tt.before); d != "" {
		t.Fatalf("the rewind did not give the tree back:\n%s\nrewind said:\n%s", d, tt.rewindOut)
	}
	for _, p := range []string{"old.fifo", "old.sock", "d/deep.fifo", "f.txt"} {
		if tt.mtimesNow[p] != tt.mtimesBefore[p] {
			t.Errorf("%s: mtime %d after the rewind, %d before", p, tt.mtimesNow[p], tt.mtimesBefore[p])
		}
	}
}

// TestRewindKeepsEmptyDirectoriesThatWereThere: git gc fills the empty
// .git/objects/pack and empties loose-object directories; the rewind
// deletes the packs and must leave pack itself (and every directory that
// was there) as it was, empty or not.
func TestRewindKeepsEmptyDirectoriesThatWereThere(t *testing.T) {
	seed := `git init -q -b main && git config user.email t@example.com && git config user.name t &&
printf ".tiny-agent/\n" > .gitignore && for i in 1 2 3; do echo $i > f$i.txt; done && git add -A && git commit -qm one &&
mkdir -p empty/inner keep && touch keep/x`
	tt := runTxTurn(t, seed, "git gc -q", "touch empty/inner/new && rm keep/x")
	if _, ok := tt.before[".git/objects/pack"]; !ok {
		t.Fatalf("the seed has no .git/objects/pack: %v", tt.before)
	}
	if tt.after[".git/objects/pack"] == "" || len(tt.after) == len(tt.before) {
		t.Fatalf("the turn did not run as scripted:\n%s", listingDiff(tt.after, tt.before))
	}
	if d := listingDiff(tt.rewound, tt.before); d != "" {
		t.Fatalf("the rewind did not give the tree back:\n%s\nrewind said:\n%s", d, tt.rewindOut)
	}
}

// TestRewindGivesBackMTimesAndModes: what a rewind puts back has the
// modification time and mode it had, to the nanosecond: appended,
// deleted, re-moded and overwritten files, a replaced symlink, and a
// deleted directory with what was in it.
func TestRewindGivesBackMTimesAndModes(t *testing.T) {
	seed := `echo a > a && echo b > b && echo c > c && chmod 755 c && echo d > d && ln -s a l &&
mkdir -p sub/deeper && echo s > sub/deeper/s &&
touch -h -d '2001-02-03 04:05:06.123456789' a b c d l sub/deeper/s sub/deeper sub`
	tt := runTxTurn(t, seed, "echo more >> a && rm b && chmod 600 c && echo new > d && ln -sfn d l && rm -r sub")
	if d := listingDiff(tt.rewound, tt.before); d != "" {
		t.Fatalf("the rewind did not give the tree back:\n%s\nrewind said:\n%s", d, tt.rewindOut)
	}
	for _, p := range []string{"a", "b", "c", "d", "l", "sub/deeper/s"} {
		if tt.mtimesNow[p] != tt.mtimesBefore[p] {
			t.Errorf("%s: mtime %v after the rewind, %v before", p, time.Unix(0, tt.mtimesNow[p]), time.Unix(0, tt.mtimesBefore[p]))
		}
	}
	for _, p := range []string{"sub", "sub/deeper"} {
		fi, err := os.Lstat(filepath.Join(tt.dir, p))
		if err != nil {
			t.Fatal(err)
		}
		if want := time.Date(2001, 2, 3, 4, 5, 6, 123456789, time.Local); !fi.ModTime().Equal(want) {
			t.Errorf("%s: mtime %v after the rewind, %v before", p, fi.ModTime(), want)
		}
	}
}
