package cli

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/checkpoint"
	"github.com/tiny-agent/tiny-go/internal/checkpoint/checkpointtest"
	"github.com/tiny-agent/tiny-go/internal/providertest"
	"github.com/tiny-agent/tiny-go/internal/testenv"
)

// Issue 41: commands write the working tree, and a rewind restores it,
// wherever users keep a project and whoever they are. The real binary
// (cmd/tiny-go, which makes itself non-dumpable as users run it) plays
// one turn whose commands write, make folders, edit and delete (and whose
// write tool makes a file in a new folder), and is then
// rewound; the tree must be what the commands made, then exactly what it
// was. Run as root it also runs everything as an unprivileged user
// (testenv.UserUID), whose commands must get the same containment: the command
// is PID 1 of its own namespace and cannot write .tiny-agent.

// place is one kind of folder a project lives in.
type place struct {
	name     string
	git      bool // a git repository
	odd      bool // spaces and non-ASCII letters in its path
	underTmp bool // under /tmp rather than testenv.WorkDir
	tmpdir   bool // TMPDIR names a separate folder
}

var places = []place{
	{name: "outside-tmp"},
	{name: "outside-tmp-git", git: true},
	{name: "tmpdir-elsewhere", tmpdir: true},
	{name: "under-tmp-tmpdir-elsewhere-git", underTmp: true, tmpdir: true, git: true},
	{name: "spaces-non-ascii-git", odd: true, git: true, tmpdir: true},
}

// placesTurn: the first command writes and makes folders, the second
// edits and deletes and notes what the command saw of its containment.
var placesTurn = []string{
	"echo hi > a.txt && mkdir -p d/e && echo deep > d/e/f.txt",
	"sed -i s/old/new/ edit.txt && echo more >> edit.txt && rm del.txt && rm -r gone && " +
		"echo $$ > seen.txt && { touch .tiny-agent/probe 2>/dev/null && echo state-writable >> seen.txt; true; }",
}

func TestCommandsWriteWhereUsersWork(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the real binary 10 times; runs in the non-short pass")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is needed")
	}
	bin := testenv.TinyGo(t)
	users := []struct {
		name string
		uid  int
	}{{"root", 0}, {"unprivileged", testenv.UserUID}}
	for _, u := range users {
		for _, p := range places {
			t.Run(u.name+"/"+p.name, func(t *testing.T) {
				switch {
				case os.Geteuid() != 0 && u.uid == 0:
					t.Skip("needs root")
				case os.Geteuid() != 0:
					u.uid = os.Geteuid() // the unprivileged pass, as whoever runs the tests
				}
				runPlace(t, bin, p, u.uid)
			})
		}
	}
}

// placeDirs makes the folders of p: the working tree (seeded), HOME and
// the temporary folder ("" when TMPDIR stays unset), all owned by uid.
func placeDirs(t *testing.T, p place, uid int) (dir, home, tmp string) {
	t.Helper()
	base := testenv.WorkDir(t)
	if p.underTmp {
		var err error
		if base, err = os.MkdirTemp("/tmp", "tiny-go-place-"); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(base) })
		os.Chmod(base, 0o755)
	}
	dir = filepath.Join(base, "proj")
	if p.odd {
		dir = filepath.Join(base, testenv.OddName)
	}
	home = filepath.Join(base, "home")
	for _, d := range []string{dir, home} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	owned := []string{base}
	if p.tmpdir {
		tmp = testenv.WorkDir(t)
		owned = append(owned, tmp)
	}
	seed := "echo old > edit.txt && echo bye > del.txt && mkdir gone && echo x > gone/x.txt && echo keep > keep.txt"
	if p.git {
		seed += " && git init -q -b main && git add -A && git commit -qm seed"
	}
	checkpointtest.Sh(t, dir, seed)
	if uid != os.Geteuid() {
		for _, d := range owned {
			if out, err := exec.Command("chown", "-R", fmt.Sprintf("%d:%d", uid, uid), d).CombinedOutput(); err != nil {
				t.Fatalf("chown: %v %s", err, out)
			}
		}
	}
	return dir, home, tmp
}

func runPlace(t *testing.T, bin string, p place, uid int) {
	var replies []providertest.Reply
	for i, cmd := range placesTurn {
		replies = append(replies, providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall(fmt.Sprintf("c%d", i+1), "bash", fmt.Sprintf("{\"command\":%q}", cmd))}})
	}
	// The file tools too, which run outside the overlay.
	replies = append(replies, providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("w1", "write", `{"path":"w/tool.txt","content":"written\n"}`)}})
	srv := providertest.New(t, append(replies, providertest.Reply{Text: "done"})...)
	dir, home, tmp := placeDirs(t, p, uid)
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir
		cmd.Env = []string{"OTEL_SDK_DISABLED=true", "OPENROUTER_API_KEY=test-key", "TINY_ENDPOINT=" + srv.URL(),
			"HOME=" + home, "PATH=" + os.Getenv("PATH"), "GIT_CONFIG_NOSYSTEM=1"}
		if tmp != "" {
			cmd.Env = append(cmd.Env, "TMPDIR="+tmp)
		}
		testenv.AsUser(cmd, uid)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("tiny-go %q: %v\n%s", args, err, out)
		}
		return string(out)
	}
	before := checkpointtest.Listing(t, dir)
	out := run("make the changes")
	// Full containment, so no line says what is weaker.
	if strings.Contains(out, "warning") || strings.Contains(out, "without an overlay") {
		t.Fatalf("the run warned:\n%s", out)
	}
	after := checkpointtest.Listing(t, dir)
	checkPlaceTurn(t, dir, before, after, out)
	sessions, _ := filepath.Glob(filepath.Join(dir, ".tiny-agent", "sessions", "*.jsonl"))
	if len(sessions) != 1 {
		t.Fatalf("%d sessions", len(sessions))
	}
	// Raw: the index is sealed with the key of the user the binary ran
	// as (its own HOME, maybe uid 1000), which this process cannot check.
	recs, err := rawIndex(filepath.Join(strings.TrimSuffix(sessions[0], ".jsonl")+".d", checkpoint.IndexFile))
	if err != nil {
		t.Fatal(err)
	}
	txs := 0
	for _, r := range recs {
		if r.Tx != "" {
			txs++
		}
	}
	if txs < len(placesTurn) {
		t.Fatalf("%d transaction records for %d commands: the overlay was not used: %+v", txs, len(placesTurn), recs)
	}
	name := filepath.Base(sessions[0])
	id := strings.TrimSuffix(name[strings.IndexByte(name, '_')+1:], ".jsonl")
	rewindOut := run("session", "rewind", id, "--turn", "1", "--files-only")
	rewound := checkpointtest.Listing(t, dir)
	// tiny-go's own first start names .tiny-agent in the repository's
	// local ignore file (checkpoint/protect.go): not the turn's doing.
	delete(before, ".git/info/exclude")
	delete(rewound, ".git/info/exclude")
	if d := listingDiff(rewound, before); d != "" {
		t.Fatalf("after the rewind:\n%s\nrewind said:\n%s", d, rewindOut)
	}
}

// checkPlaceTurn checks that the commands' writes, folders, edit and
// deletions all landed, and that the command ran contained.
func checkPlaceTurn(t *testing.T, dir string, before, after map[string]string, out string) {
	t.Helper()
	read := func(name string) string {
		b, _ := os.ReadFile(filepath.Join(dir, name))
		return string(b)
	}
	for name, want := range map[string]string{"a.txt": "hi\n", "d/e/f.txt": "deep\n", "w/tool.txt": "written\n", "edit.txt": "new\nmore\n", "keep.txt": "keep\n"} {
		if got := read(name); got != want {
			t.Fatalf("%s is %q, want %q; the run said:\n%s", name, got, want, out)
		}
	}
	for _, gone := range []string{"del.txt", "gone", "gone/x.txt"} {
		if _, ok := after[gone]; ok {
			t.Fatalf("%s is still there; the run said:\n%s", gone, out)
		}
		if _, ok := before[gone]; !ok {
			t.Fatalf("the seed has no %s", gone)
		}
	}
	// PID 1: the command's own PID namespace; no line: .tiny-agent was
	// read-only to it.
	if got := read("seen.txt"); got != "1\n" {
		t.Fatalf("the command saw %q, want PID 1 and a read-only .tiny-agent; the run said:\n%s", got, out)
	}
}
