package cli

import (
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/tiny-agent/tiny-go/internal/checkpoint/checkpointtest"
	"github.com/tiny-agent/tiny-go/internal/providertest"
)

// The turn of TestDiskFullAtEveryWrite: deletes a folder, renames a file,
// appends to five, makes six.
const diskFullCommand = `rm -rf nm; mv keep.txt kept.txt; for f in seed/*; do echo x >> $f; done; echo new > new.txt; mkdir -p made; for i in $(seq 5); do echo $i > made/f$i; done`

// diskFull is a working directory on a small tmpfs of its own, where
// everything tiny-go writes for it lies (.tiny-agent inside it).
type diskFull struct {
	t         *testing.T
	mnt, dir  string
	prog      string
	before    map[string]string
	after     map[string]string
	pageBytes int64
	env       []string // more environment for tiny-go
}

// journaled: the command runs on the tree (its own writes fail as in plain
// bash, path by path).
func (d *diskFull) journaled() bool { return !slices.Contains(d.env, "TINY_TX=overlay") }

// TestDiskFullAtEveryWrite runs a turn, then its rewind, on a file system
// with k pages left, for every k from none to what the turn (or the
// rewind) needs, so that each of their writes in turn is the first to
// fail (session log, transaction markers, upper layer, journal, states,
// index, the rewind's copies and records). Each ends with the tree before
// or after the turn as a whole (the rewind: each path put back or
// untouched); the model is told what reached the tree; once space is
// freed, the rewind gives the tree back exactly and the session resumes.
func TestDiskFullAtEveryWrite(t *testing.T) { diskFullAtEveryWrite(t, []string{"TINY_TX=overlay"}) }

// TestDiskFullAtEveryWriteJournaled is the same with the command
// journaled on the tree (TINY_TX=journal): a change whose pre-image the
// journal cannot keep fails with ENOSPC, as the command's own writes do.
func TestDiskFullAtEveryWriteJournaled(t *testing.T) {
	diskFullAtEveryWrite(t, []string{"TINY_TX=journal"})
}

func diskFullAtEveryWrite(t *testing.T, env []string) {
	if testing.Short() {
		t.Skip("runs dozens of turns")
	}
	if os.Geteuid() != 0 {
		t.Skip("mounts a tmpfs: run as root (CI does)")
	}
	d := &diskFull{t: t, mnt: t.TempDir(), prog: programAs(t, "tiny-go"), pageBytes: int64(os.Getpagesize()), env: env}
	if err := unix.Mount("tmpfs", d.mnt, "tmpfs", 0, "size=16m,mode=0755"); err != nil {
		t.Fatalf("mounting a tmpfs: %v", err)
	}
	t.Cleanup(func() { unix.Unmount(d.mnt, unix.MNT_DETACH) })
	d.dir = filepath.Join(d.mnt, "work")

	// Calibration: the pages a whole turn and its rewind take.
	d.seed()
	free := d.free()
	srv := d.model()
	d.run(srv, "change things")
	d.after = checkpointtest.Listing(t, d.dir)
	turnPages := (free - d.free()) / d.pageBytes
	free = d.free()
	d.run(srv, "session", "rewind", killedSession(t, d.dir), "--turn", "1", "--files-only")
	rewindPages := (free - d.free()) / d.pageBytes
	if diff := listingDiff(checkpointtest.Listing(t, d.dir), d.before); diff != "" {
		t.Fatalf("the rewind with space:\n%s", diff)
	}
	t.Logf("a turn takes %d pages, its rewind %d", turnPages, rewindPages)

	told := map[string]int{}
	for k := int64(0); k <= turnPages+1; k++ {
		t.Run(fmt.Sprint("turn/", k), func(t *testing.T) { told[d.turnCase(t, k)]++ })
	}
	rewound := map[string]int{}
	for k := int64(0); k <= rewindPages+4; k++ {
		t.Run(fmt.Sprint("rewind/", k), func(t *testing.T) { rewound[d.rewindCase(t, k)]++ })
	}
	t.Logf("turns: %v; rewinds: %v", told, rewound)
}

// seed makes a fresh working directory (the previous one removed).
func (d *diskFull) seed() {
	os.RemoveAll(d.dir)
	os.Remove(filepath.Join(d.mnt, "filler"))
	checkpointtest.Sh(d.t, d.mnt, `mkdir -p work/seed work/nm/a work/nm/b && cd work &&
for i in 1 2 3 4 5; do echo s$i > seed/f$i; echo m$i > nm/a/m$i; echo n$i > nm/b/n$i; done && echo keep > keep.txt`)
	d.before = checkpointtest.Listing(d.t, d.dir)
}

// free is what the tmpfs has left, in bytes.
func (d *diskFull) free() int64 {
	var st unix.Statfs_t
	if err := unix.Statfs(d.mnt, &st); err != nil {
		d.t.Fatal(err)
	}
	return int64(st.Bavail) * st.Bsize
}

// fill leaves k pages free.
func (d *diskFull) fill(k int64) {
	f, err := os.Create(filepath.Join(d.mnt, "filler"))
	if err != nil {
		d.t.Fatal(err)
	}
	defer f.Close()
	if n := d.free() - k*d.pageBytes; n > 0 {
		if err := unix.Fallocate(int(f.Fd()), 0, 0, n); err != nil {
			d.t.Fatalf("filling the tmpfs: %v", err)
		}
	}
	if got := d.free() / d.pageBytes; got != k {
		d.t.Fatalf("%d pages free, want %d", got, k)
	}
}

// unfill frees the space again.
func (d *diskFull) unfill() { os.Remove(filepath.Join(d.mnt, "filler")) }

func (d *diskFull) model() *providertest.Server {
	return providertest.New(d.t,
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c1", "bash", mustJSON(d.t, map[string]string{"command": diskFullCommand}))}},
		providertest.Reply{Text: "done"},
	)
}

// command is tiny-go in the working directory against srv.
func (d *diskFull) command(srv *providertest.Server, args ...string) *exec.Cmd {
	cmd := exec.Command(d.prog, append([]string{"--cwd", d.dir}, args...)...)
	cmd.Env = append(append(os.Environ(), childEnv+"=1", "OTEL_SDK_DISABLED=true", "OPENROUTER_API_KEY=k", "TINY_ENDPOINT="+srv.URL()), d.env...)
	return cmd
}

// run runs tiny-go and fails the test when it fails.
func (d *diskFull) run(srv *providertest.Server, args ...string) string {
	d.t.Helper()
	out, err := d.command(srv, args...).CombinedOutput()
	if err != nil {
		d.t.Fatalf("tiny-go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// modelWasTold is what the model was told of the command ("" when the
// turn never got that far).
func modelWasTold(srv *providertest.Server) string {
	reqs := srv.Requests()
	if len(reqs) < 2 {
		return ""
	}
	for _, m := range reqs[1].Chat.Messages {
		if m.Role == "tool" && m.Content != nil {
			return *m.Content
		}
	}
	return ""
}

// turnCase runs the turn with k pages free and checks the tree, what the
// model was told, and the rewind and resume once space is back. It says
// how the turn ended.
func (d *diskFull) turnCase(t *testing.T, k int64) string {
	d.t = t
	d.seed()
	d.fill(k)
	srv := d.model()
	out, err := d.command(srv, "change things").CombinedOutput()
	got := checkpointtest.Listing(t, d.dir)
	result := modelWasTold(srv)
	var outcome string
	switch {
	case maps.Equal(got, d.after):
		outcome = "after"
		if strings.Contains(result, "could not all be applied") {
			t.Fatalf("every change reached the tree, yet the model was told:\n%s", result)
		}
	case maps.Equal(got, d.before):
		outcome = "before"
		if strings.Contains(result, "The command was not run") {
			outcome += ", told not run"
		}
		if result != "" && !strings.Contains(result, "No space left") && !strings.Contains(result, "The command was not run") {
			t.Fatalf("nothing reached the tree, yet the model was told:\n%s", result)
		}
	case strings.Contains(result, "No space left") || d.journaled() && strings.Contains(result, "I/O error"):
		// The command's own writes failed, as in plain bash: its changes
		// so far are applied, each path as before or as after. (dash
		// says "I/O error" for a write that failed with ENOSPC: on the
		// tree itself a new file's open succeeds, its write does not.)
		outcome = "command failed"
		d.checkPaths(got)
	default:
		t.Fatalf("a mix of before and after (exit %v):\n%s\nthe model was told:\n%s\ntiny-go said:\n%s", err, listingDiff(got, d.after), result, out)
	}
	if err != nil {
		outcome += ", tiny-go failed"
		if !strings.Contains(string(out), "no space left") {
			t.Fatalf("tiny-go failed without saying the disk is full: %v\n%s", err, out)
		}
	}
	d.unfill()
	// A disk too full for the transaction's marker or before record
	// blocks the command; it never runs without its checkpoint.
	if strings.Contains(string(out), "no checkpoints in this directory") || strings.Contains(string(out), "commands run without an overlay") {
		t.Fatalf("the command ran without its checkpoint:\n%s", out)
	}
	d.rewindAndResume(t, "after the full disk")
	t.Log(outcome)
	return outcome
}

// rewindCase runs the turn with space, then its rewind with k pages free.
func (d *diskFull) rewindCase(t *testing.T, k int64) string {
	d.t = t
	d.seed()
	d.run(d.model(), "change things")
	d.fill(k)
	out, err := d.command(d.model(), "session", "rewind", killedSession(t, d.dir), "--turn", "1", "--files-only").CombinedOutput()
	got := checkpointtest.Listing(t, d.dir)
	outcome := "done"
	if err != nil {
		outcome = "failed"
		if !strings.Contains(string(out), "no space left") {
			t.Fatalf("the rewind failed without saying the disk is full: %v\n%s", err, out)
		}
		d.checkPaths(got)
	} else if diff := listingDiff(got, d.before); diff != "" {
		t.Fatalf("the rewind said it was done, but left:\n%s\nit said:\n%s", diff, out)
	}
	d.unfill()
	d.rewindAndResume(t, "after the rewind on a full disk")
	return outcome
}

// checkPaths: every path is as before the turn or as after it (a put's
// temporary aside: the next rewind removes it).
func (d *diskFull) checkPaths(got map[string]string) {
	var bad []string
	for _, p := range slices.Sorted(maps.Keys(got)) {
		if d.journaled() && got[p] == emptyFile && d.before[p] == "" && strings.HasPrefix(d.after[p], "-") {
			continue // made, its write refused for want of space: as in plain bash
		}
		if got[p] != d.before[p] && got[p] != d.after[p] && !strings.Contains(p, ".tiny-tmp-") {
			bad = append(bad, fmt.Sprintf("%s: %q", p, got[p]))
		}
	}
	if len(bad) > 0 {
		d.t.Fatalf("paths neither before nor after the turn:\n%s", strings.Join(bad, "\n"))
	}
}

// rewindAndResume: with space again, the rewind gives the tree back
// exactly and the session takes a new turn.
func (d *diskFull) rewindAndResume(t *testing.T, when string) {
	sessions, _ := filepath.Glob(filepath.Join(d.dir, ".tiny-agent", "sessions", "*.jsonl"))
	if len(sessions) == 0 {
		if diff := listingDiff(checkpointtest.Listing(t, d.dir), d.before); diff != "" {
			t.Fatalf("no session, yet the tree changed:\n%s", diff)
		}
		return
	}
	id := killedSession(t, d.dir)
	srv := providertest.New(t, providertest.Reply{Text: "resumed"}, providertest.Reply{Text: "resumed"}, providertest.Reply{Text: "resumed"})
	out, err := d.command(srv, "session", "rewind", id, "--turn", "1", "--files-only").CombinedOutput()
	if err != nil && !strings.Contains(string(out), "no user turn") {
		t.Fatalf("%s, the rewind with space: %v\n%s", when, err, out)
	}
	if diff := listingDiff(checkpointtest.Listing(t, d.dir), d.before); diff != "" {
		t.Fatalf("%s, the rewind with space left:\n%s\nit said:\n%s", when, diff, out)
	}
	if out, err := d.command(srv, "--session", id, "go on").CombinedOutput(); err != nil {
		t.Fatalf("%s, the session does not resume: %v\n%s", when, err, out)
	}
	if pending, _ := os.ReadDir(filepath.Join(d.dir, ".tiny-agent", "checkpoints", "tx", "pending")); len(pending) != 0 {
		t.Fatalf("%s: still pending: %v", when, pending)
	}
}
