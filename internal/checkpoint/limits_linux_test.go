package checkpoint

import (
	"fmt"
	"maps"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/checkpoint/checkpointtest"
)

// The kernel's own limits, met for real (as root): a queue that overflows
// while a command runs, and a watch limit smaller than the tree.

const queuedEvents = "/proc/sys/fs/inotify/max_queued_events"

// sysctlMu serializes this package's tests that change a sysctl.
var sysctlMu sync.Mutex

// withQueueLimit runs start with fs.inotify.max_queued_events lowered to
// n: the kernel reads it when an inotify instance is made, so it is
// restored as soon as start returned (other processes of the machine see
// the low value only meanwhile).
func withQueueLimit(t *testing.T, n int, start func()) {
	t.Helper()
	old, err := os.ReadFile(queuedEvents)
	if err != nil {
		t.Skipf("cannot read %s: %v", queuedEvents, err)
	}
	sysctlMu.Lock()
	defer sysctlMu.Unlock()
	if err := os.WriteFile(queuedEvents, []byte(strconv.Itoa(n)), 0o644); err != nil {
		t.Skipf("cannot lower %s (not root?): %v", queuedEvents, err)
	}
	defer func() {
		if err := os.WriteFile(queuedEvents, old, 0o644); err != nil {
			t.Errorf("restore %s to %s: %v", queuedEvents, strings.TrimSpace(string(old)), err)
		}
	}()
	start()
}

// TestRealQueueOverflow lowers the kernel's inotify queue to 64 events
// and runs a command that creates thousands of files: the checkpoint
// after it scans the tree (one line says changes were lost), is exactly
// the tree, the command can be rewound, and tracking goes on.
func TestRealQueueOverflow(t *testing.T) {
	for _, mode := range []string{"plain", "git"} {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			if mode == "git" {
				if _, err := exec.LookPath("git"); err != nil {
					t.Skip("no git")
				}
				checkpointtest.Sh(t, dir, "git init -q")
			}
			seed(t, dir)
			if mode == "git" {
				checkpointtest.Sh(t, dir, "git add -A && git commit -qm init")
			}
			k := newTask(t, dir, Options{DisableGit: mode == "plain"})
			defer k.store.Close()
			w := &warnings{}
			withQueueLimit(t, 64, func() {
				k.store.Track(w.add)
				<-k.store.tr.ready
			})
			want := checkpointtest.TreeDigests(t, dir)
			overflowed := false
			start := len(k.records())
			for try := 0; try < 3 && !overflowed; try++ {
				script := fmt.Sprintf("mkdir -p gen%d && cd gen%d && for i in $(seq 1 3000); do echo $i > f$i; done && echo changed >> ../doc.md", try, try)
				k.effect("bash", `{}`, func() { checkpointtest.Sh(t, dir, script) })
				recs := k.records()
				after := recs[len(recs)-1]
				if got, want := snapDigests(t, k.store, after), checkpointtest.TreeDigests(t, dir); !maps.Equal(got, want) {
					t.Fatalf("the checkpoint after the command is not the tree: %d files, want %d", len(got), len(want))
				}
				for _, l := range w.all() {
					overflowed = overflowed || strings.Contains(l, "queue overflowed")
				}
				if !overflowed {
					continue
				}
				sum := k.rewind(start, false)
				if len(sum.Skipped)+len(sum.Warnings) != 0 {
					t.Fatalf("rewind: %+v", sum)
				}
			}
			if !overflowed {
				t.Skipf("3 tries of 3,000 files did not overflow a 64-event queue (lines %q)", w.all())
			}
			if got := checkpointtest.TreeDigests(t, dir); !maps.Equal(got, want) {
				t.Fatalf("after rewinding the command: %d files, want %d", len(got), len(want))
			}
			lines := w.all()
			if len(lines) != 1 || !strings.HasPrefix(lines[0], "tiny-go: checkpoint tracking lost changes (the kernel's inotify queue overflowed)") {
				t.Fatalf("want one line saying changes were lost, got %q", lines)
			}
			// Tracking goes on: a small change is a tracked delta again.
			k.effect("bash", `{}`, func() { writeFile(t, dir, "small.txt", "small\n") })
			recs := k.records()
			if got, want := snapDigests(t, k.store, recs[len(recs)-1]), checkpointtest.TreeDigests(t, dir); !maps.Equal(got, want) {
				t.Fatalf("after the overflow: snapshot differs from the tree")
			}
			if k.store.tr.t == nil || !k.store.tr.valid {
				t.Fatal("tracking stopped after an overflow")
			}
		})
	}
}

// TestRealWatchLimitChild runs in a user namespace of its own whose
// inotify watch limit (user.max_inotify_watches, per namespace) is set
// below the tree's directories.
func TestRealWatchLimitChild(t *testing.T) {
	dir := os.Getenv("TINY_WATCH_LIMIT_DIR")
	if dir == "" {
		t.Skip("the child of TestRealWatchLimit")
	}
	if err := os.WriteFile("/proc/sys/user/max_inotify_watches", []byte("4"), 0o644); err != nil {
		t.Fatalf("set the namespace's watch limit: %v", err)
	}
	for i := range 12 {
		writeFile(t, dir, fmt.Sprintf("d%d/sub/f.txt", i), "x\n")
	}
	k := newTask(t, dir, Options{DisableGit: true})
	defer k.store.Close()
	w := &warnings{}
	k.store.Track(w.add)
	want := checkpointtest.TreeDigests(t, dir)
	for c := range 3 {
		k.effect("bash", `{}`, func() {
			checkpointtest.Sh(t, dir, fmt.Sprintf("echo %d >> d%d/sub/f.txt && chmod +x d%d/sub/f.txt && mkdir -p new%d && echo n > new%d/g", c, c, c, c, c))
		})
		recs := k.records()
		if got, want := snapDigests(t, k.store, recs[len(recs)-1]), checkpointtest.TreeDigests(t, dir); !maps.Equal(got, want) {
			t.Fatalf("checkpoint %d: %v\nwant %v", c, got, want)
		}
	}
	lines := w.all()
	if len(lines) != 1 || !strings.Contains(lines[0], "fell back") || !strings.Contains(lines[0], "max_user_watches") {
		t.Fatalf("want one line saying tracking fell back at the watch limit, got %q", lines)
	}
	if sum := k.rewind(0, false); len(sum.Skipped)+len(sum.Warnings) != 0 {
		t.Fatalf("rewind: %+v", sum)
	}
	if got := checkpointtest.TreeDigests(t, dir); !maps.Equal(got, want) {
		t.Fatalf("after the rewind: %v\nwant %v", got, want)
	}
}

// TestRealWatchLimit meets the kernel's watch limit (not the test seam
// Options.MaxWatches): the child runs in a new user namespace, where the
// limit can be lowered without touching the machine's.
func TestRealWatchLimit(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to map itself into a user namespace")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestRealWatchLimitChild$", "-test.v")
	// The key of its own: root's (uid 65534's, internal/statekey) cannot
	// be read in a namespace that maps only root.
	cmd.Env = append(os.Environ(), "TINY_WATCH_LIMIT_DIR="+t.TempDir(), "TINY_GO_KEY_DIR="+t.TempDir())
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1}},
	}
	out, err := cmd.CombinedOutput()
	if err != nil && strings.Contains(err.Error(), "operation not permitted") {
		t.Skipf("no user namespaces here: %v", err)
	}
	if err != nil || !strings.Contains(string(out), "--- PASS: TestRealWatchLimitChild") {
		t.Fatalf("child: %v\n%s", err, out)
	}
}

// A plain tree past Options.MaxFiles gets no checkpoints, and one line
// says so with what to do; a rewind then says it has none.
func TestTooManyFilesTrackedSaysSo(t *testing.T) {
	dir := t.TempDir()
	for i := range 12 {
		writeFile(t, dir, "f"+strconv.Itoa(i), "x")
	}
	k := newTask(t, dir, Options{DisableGit: true, MaxFiles: 10})
	defer k.store.Close()
	w := &warnings{}
	k.store.Track(w.add)
	k.effect("bash", `{}`, func() { writeFile(t, dir, "f0", "changed") })
	k.effect("bash", `{}`, func() { writeFile(t, dir, "f1", "changed") })
	lines := w.all()
	if len(lines) != 1 || !strings.HasPrefix(lines[0], "tiny-go: no checkpoints in this directory: the working directory has more than 10 files") || !strings.Contains(lines[0], "git repository") {
		t.Fatalf("want one line saying there are no checkpoints and what to do, got %q", lines)
	}
	sum := k.rewind(0, false)
	if len(sum.Warnings) != 2 || !strings.Contains(sum.Warnings[0], "more than 10 files") {
		t.Fatalf("rewind: %+v", sum)
	}
}
