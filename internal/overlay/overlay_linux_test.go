package overlay

import (
	"fmt"
	"io/fs"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tiny-agent/tiny-go/internal/checkpoint/checkpointtest"
)

// The tests mount real overlays through util-linux's unshare, as root or
// as an unprivileged user in a user namespace (setpriv): the kernel's own
// whiteouts, opaque directories and copy-ups are what Apply reads.

func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount overlays (or to become an unprivileged user for the user-namespace case)")
	}
	for _, tool := range []string{"unshare", "setpriv"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s (util-linux) is needed: %v", tool, err)
		}
	}
}

// unprivUID is the user the user-namespace cases run as.
const unprivUID = 1000

// seedTree makes a tree with every kind of entry a command can destroy.
func seedTree(t *testing.T, tree string) {
	t.Helper()
	sh(t, tree, `mkdir -p src/pkg empty node_modules/a/b dir .git/refs/heads &&
echo main > src/main.go && echo lib > src/pkg/lib.go && printf 'SECRET=1\n' > .env && chmod 600 .env &&
printf '#!/bin/sh\necho hi\n' > run.sh && chmod 755 run.sh && ln -s src/main.go link && echo keep > keep.txt &&
for i in $(seq 1 50); do echo $i > node_modules/a/b/f$i; done && echo d > dir/old &&
echo abc > .git/refs/heads/feature && echo ref > .git/HEAD && mkdir -p .tiny-agent && echo s > .tiny-agent/state`)
}

// destroy is a command that changes every kind of entry.
const destroy = `rm -rf src .env node_modules .git/refs/heads/feature && chmod -x run.sh && ln -sfn keep.txt link &&
echo more >> keep.txt && mkdir -p new/deep && echo n > new/deep/n && rm -rf dir && mkdir dir && echo y > dir/y &&
rmdir empty && mkdir empty2 && chmod 700 new && echo x > .git/HEAD`

func sh(t *testing.T, dir, script string) {
	t.Helper()
	cmd := exec.Command("sh", "-c", script)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", script, err, out)
	}
}

// runOver runs script with cwd on an overlay of tx's tree, as the sandbox
// would mount it: as root, or as unprivUID in a user namespace.
func runOver(t *testing.T, tx *Tx, script string, userNS bool) {
	t.Helper()
	opts, err := Options(tx.Tree, tx.Upper(), tx.Work(), userNS)
	if err != nil {
		t.Fatal(err)
	}
	inner := fmt.Sprintf(`mount -t overlay overlay -o '%s' '%s' && cd '%s' && %s`, opts, tx.Tree, tx.Tree, script)
	var cmd *exec.Cmd
	if userNS {
		cmd = exec.Command("setpriv", fmt.Sprintf("--reuid=%d", unprivUID), fmt.Sprintf("--regid=%d", unprivUID), "--clear-groups",
			"unshare", "--user", "--map-root-user", "--mount", "sh", "-c", inner)
	} else {
		cmd = exec.Command("unshare", "--mount", "sh", "-c", inner)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("over the overlay: %v\n%s", err, out)
	}
}

// setup makes a tree and a transaction root beside it (inside .tiny-agent
// when inState), owned by owner.
func setup(t *testing.T, owner int, inState bool) (tree, root string) {
	t.Helper()
	base := t.TempDir()
	os.Chmod(base, 0o755)
	os.Chmod(filepath.Dir(base), 0o755)
	tree = filepath.Join(base, "tree")
	os.Mkdir(tree, 0o755)
	seedTree(t, tree)
	root = filepath.Join(base, "tx")
	if inState {
		root = filepath.Join(tree, StateDirName, "tx")
	}
	os.MkdirAll(root, 0o700)
	if owner != 0 {
		sh(t, base, fmt.Sprintf("chown -R %d:%d .", owner, owner))
	}
	return tree, root
}

// expected is what the command makes of a copy of the tree, run directly.
func expected(t *testing.T, tree, script string) map[string]string {
	t.Helper()
	cp := filepath.Join(t.TempDir(), "copy")
	sh(t, "/", fmt.Sprintf("cp -a '%s' '%s'", tree, cp))
	sh(t, cp, script)
	return checkpointtest.Listing(t, cp)
}

// overlayTree makes tree an overlay of what it holds (the lower layer)
// with an upper layer beside it, as a fleet worker lays out a workspace,
// and returns a folder on the real file system for a transaction's
// layers: overlayfs cannot be an upper layer.
func overlayTree(t *testing.T, tree string) (layers string) {
	t.Helper()
	base := filepath.Dir(tree)
	for _, d := range []string{"up", "ovl", "layers"} {
		os.Mkdir(filepath.Join(base, d), 0o755)
	}
	lower := filepath.Join(base, "lower")
	if err := os.Rename(tree, lower); err != nil {
		t.Fatal(err)
	}
	os.Mkdir(tree, 0o755)
	// redirect_dir=on, as the fleet mounts it: Apply moves directories
	// of the lower layer aside (off, the kernel refuses with EXDEV).
	opts := fmt.Sprintf("lowerdir=%s,upperdir=%s/up,workdir=%s/ovl,redirect_dir=on,metacopy=off,index=off", lower, base, base)
	if err := syscall.Mount("overlay", tree, "overlay", 0, opts); err != nil {
		t.Fatalf("mount the tree's overlay: %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(tree, syscall.MNT_DETACH) })
	return filepath.Join(base, "layers")
}

func TestApplyIsTheCommandRunDirectly(t *testing.T) {
	needRoot(t)
	for _, c := range []struct {
		name                   string
		userNS, inState, apart bool
	}{{"root", false, true, false}, {"root/beside", false, false, false}, {"userns", true, true, false},
		{"root/tree-is-an-overlay", false, true, true}} {
		t.Run(c.name, func(t *testing.T) {
			owner := 0
			if c.userNS {
				owner = unprivUID
			}
			tree, root := setup(t, owner, c.inState)
			layers := ""
			if c.apart {
				layers = overlayTree(t, tree)
				sh(t, tree, "mkfifo fifo") // what a copy must keep
			}
			before := checkpointtest.Listing(t, tree)
			want := expected(t, tree, destroy+" && ln new/deep/n second")
			tx, err := BeginApart(root, layers, tree, "tx1")
			if err != nil {
				t.Fatal(err)
			}
			if c.userNS {
				sh(t, root, fmt.Sprintf("chown -R %d:%d .", owner, owner))
			}
			runOver(t, tx, destroy+" && ln new/deep/n second", c.userNS)
			if got := checkpointtest.Listing(t, tree); !maps.Equal(got, before) {
				t.Fatalf("the command changed the tree itself:\n%v", got)
			}
			changes, err := tx.Changes()
			if err != nil {
				t.Fatal(err)
			}
			res, err := tx.Apply(changes)
			if err != nil {
				t.Fatal(err)
			}
			if got := checkpointtest.Listing(t, tree); !maps.Equal(got, want) {
				t.Fatalf("after apply:\n%v\nwant\n%v\nchanges %+v", got, want, res.Changes)
			}
			if len(res.Conflicts()) != 0 {
				t.Fatalf("conflicts: %v", res.Conflicts())
			}
			// The originals were moved aside whole.
			if got := checkpointtest.Listing(t, tx.Orig("node_modules")); len(got) != 53 {
				t.Fatalf("orig/node_modules has %d entries, want 53", len(got))
			}
			for p, want := range map[string]string{".env": "SECRET=1\n", "src/main.go": "main\n", ".git/refs/heads/feature": "abc\n"} {
				if data, err := os.ReadFile(tx.Orig(p)); err != nil || string(data) != want {
					t.Fatalf("orig %s: %q %v", p, data, err)
				}
			}
			assertNoMarks(t, tree)
			for _, d := range []string{tx.Upper(), filepath.Join(tx.Dir, stagedName)} {
				if _, err := os.Stat(d); !os.IsNotExist(err) {
					t.Fatalf("%s was left: %v", d, err)
				}
			}
			if a, b := statOf(t, filepath.Join(tree, "new/deep/n")), statOf(t, filepath.Join(tree, "second")); a.Ino != b.Ino {
				t.Fatal("a hard link the command made became two files")
			}
		})
	}
}

func statOf(t *testing.T, p string) *syscall.Stat_t {
	t.Helper()
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t)
}

// assertNoMarks: nothing of overlay's remains in the tree.
func assertNoMarks(t *testing.T, tree string) {
	t.Helper()
	filepath.WalkDir(tree, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type()&fs.ModeCharDevice != 0 {
			t.Errorf("a whiteout is in the tree: %s", p)
		}
		for _, name := range []string{"opaque", "origin", "impure", "whiteout"} {
			if hasXattr(p, name) {
				t.Errorf("%s carries overlay.%s", p, name)
			}
		}
		return nil
	})
}

func TestChangedMeanwhileIsAConflict(t *testing.T) {
	needRoot(t)
	tree, root := setup(t, 0, true)
	tx, err := Begin(root, tree, "tx1")
	if err != nil {
		t.Fatal(err)
	}
	runOver(t, tx, "echo agent > keep.txt && echo agent > fresh.txt && rm src/main.go", false)
	// Another program (an editor) writes the same file, creates the same
	// new file, while the command runs.
	time.Sleep(10 * time.Millisecond) // the file system's clock is coarse
	sh(t, tree, "echo editor > keep.txt && echo editor > fresh.txt")
	changes, err := tx.Changes()
	if err != nil {
		t.Fatal(err)
	}
	res, err := tx.Apply(changes)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Conflicts(); !slices.Equal(got, []string{"fresh.txt", "keep.txt"}) {
		t.Fatalf("conflicts %v", got)
	}
	for p, want := range map[string]string{"keep.txt": "editor\n", "fresh.txt": "editor\n"} {
		if data, _ := os.ReadFile(filepath.Join(tree, p)); string(data) != want {
			t.Fatalf("%s = %q: the other program's version must stay", p, data)
		}
		if data, _ := os.ReadFile(tx.Conflict(p)); string(data) != "agent\n" {
			t.Fatalf("the command's %s was not kept: %q", p, data)
		}
	}
	if _, err := os.Lstat(filepath.Join(tree, "src/main.go")); !os.IsNotExist(err) {
		t.Fatal("the change without conflict was not applied")
	}
}

func TestDiscardLeavesTheTree(t *testing.T) {
	needRoot(t)
	tree, root := setup(t, 0, true)
	before := checkpointtest.Listing(t, tree)
	tx, err := Begin(root, tree, "tx1")
	if err != nil {
		t.Fatal(err)
	}
	runOver(t, tx, destroy, false)
	if err := tx.Discard(); err != nil {
		t.Fatal(err)
	}
	if got := checkpointtest.Listing(t, tree); !maps.Equal(got, before) {
		t.Fatal("discard changed the tree")
	}
	if ids, err := Recover(root, tree); err != nil || len(ids) != 0 {
		t.Fatalf("recover after discard: %v %v", ids, err)
	}
}

// TestApplyChild applies a prepared transaction until killed.
func TestApplyChild(t *testing.T) {
	dir := os.Getenv("TINY_OVERLAY_CHILD")
	if dir == "" {
		t.Skip("the child of TestKilledApplyIsFinished")
	}
	tx, err := Open(os.Getenv("TINY_OVERLAY_CHILD_ROOT"), filepath.Join(dir, "tree"), "tx1")
	if err != nil {
		t.Fatal(err)
	}
	changes, err := tx.Changes()
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "started"), nil, 0o600)
	if _, err := tx.Apply(changes); err != nil {
		t.Fatal(err)
	}
}

// TestKilledApplyIsFinished SIGKILLs an apply of many changes at random
// moments; Recover then leaves the tree exactly as the command left its
// view, and every original in orig.
func TestKilledApplyIsFinished(t *testing.T) {
	needRoot(t)
	script := destroy + ` && for i in $(seq 1 300); do echo $i > f$i; done && for i in $(seq 1 40); do mkdir -p t$i && echo $i > t$i/x; done`
	killedMidway := 0
	for i := range 12 {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			tree, _ := setup(t, 0, false)
			base := filepath.Dir(tree)
			root, layers := filepath.Join(base, "tx"), ""
			if i%2 == 1 { // a tree that is an overlay: layers apart, a copy first
				layers, root = overlayTree(t, tree), filepath.Join(tree, StateDirName, "tx")
			}
			sh(t, tree, "for i in $(seq 1 300); do echo old$i > f$i; done")
			want := expected(t, tree, script)
			tx, err := BeginApart(root, layers, tree, "tx1")
			if err != nil {
				t.Fatal(err)
			}
			runOver(t, tx, script, false)
			tx.lock.Close() // the child owns it now
			cmd := exec.Command(os.Args[0], "-test.run=^TestApplyChild$")
			cmd.Env = append(os.Environ(), "TINY_OVERLAY_CHILD="+base, "TINY_OVERLAY_CHILD_ROOT="+root)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Microsecond) {
				if _, err := os.Stat(filepath.Join(base, "started")); err == nil {
					break
				}
				if time.Now().After(deadline) {
					cmd.Process.Kill()
					t.Fatal("the child did not start")
				}
			}
			time.Sleep(time.Duration(rand.IntN(4000)) * time.Microsecond)
			cmd.Process.Signal(syscall.SIGKILL)
			err = cmd.Wait()
			ids, rerr := Recover(root, tree)
			if rerr != nil {
				t.Fatal(rerr)
			}
			if err != nil && len(ids) == 1 {
				if _, jerr := os.Stat(filepath.Join(tx.Dir, journalName)); jerr == nil {
					killedMidway++
				}
			}
			if got := checkpointtest.Listing(t, tree); !maps.Equal(got, want) {
				t.Fatalf("after kill and recover (%v, recovered %v):\n%s", err, ids, diff(got, want))
			}
			if got := checkpointtest.Listing(t, tx.Orig("node_modules")); len(got) != 53 {
				t.Fatalf("orig/node_modules has %d entries", len(got))
			}
		})
	}
	t.Logf("%d of 12 kills landed after the journal", killedMidway)
}

// A transaction whose layers were apart, on a machine that is gone (a
// fleet's workspace rebuilt on another worker with the tree's part of
// it), is finished as one that changed nothing.
func TestRecoverWithoutTheLayersApart(t *testing.T) {
	needRoot(t)
	tree, _ := setup(t, 0, false)
	layers := overlayTree(t, tree)
	root := filepath.Join(tree, StateDirName, "tx")
	before := checkpointtest.Listing(t, tree)
	tx, err := BeginApart(root, layers, tree, "tx1")
	if err != nil {
		t.Fatal(err)
	}
	runOver(t, tx, destroy, false)
	tx.lock.Close() // its process died
	if err := removeAll(layers); err != nil {
		t.Fatal(err)
	}
	if ids, err := Recover(root, tree); err != nil || len(ids) != 1 {
		t.Fatalf("recover: %v %v", ids, err)
	}
	if got := checkpointtest.Listing(t, tree); !maps.Equal(got, before) {
		t.Fatalf("the tree changed:\n%s", diff(got, before))
	}
	if _, err := os.Stat(tx.Dir); !os.IsNotExist(err) {
		t.Fatalf("the transaction was left: %v", err)
	}
}

// A process killed inside Remove (a command that changed nothing, or a
// discarded one) leaves the transaction's start without its layers: a
// recovery removes it rather than failing every later rewind with "no
// such file or directory" (found running the cli tests as cloudsdk).
func TestRecoverAfterAKilledRemove(t *testing.T) {
	tree, _ := setup(t, 0, false)
	root := filepath.Join(tree, StateDirName, "tx")
	before := checkpointtest.Listing(t, tree)
	tx, err := Begin(root, tree, "tx1")
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.removeLayers(); err != nil {
		t.Fatal(err)
	}
	tx.lock.Close() // its process died here
	if ids, err := Recover(root, tree); err != nil || len(ids) != 1 {
		t.Fatalf("recover: %v %v", ids, err)
	}
	if got := checkpointtest.Listing(t, tree); !maps.Equal(got, before) {
		t.Fatalf("the tree changed:\n%s", diff(got, before))
	}
	if _, err := os.Stat(tx.Dir); !os.IsNotExist(err) {
		t.Fatalf("the transaction was left: %v", err)
	}
}

func diff(got, want map[string]string) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(want)) {
		if got[k] != want[k] {
			fmt.Fprintf(&b, "%s: got %q want %q\n", k, got[k], want[k])
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			fmt.Fprintf(&b, "%s: extra %q\n", k, got[k])
		}
	}
	return b.String()
}

// A recovery that opened a transaction's marker just before its process
// finished it (the marker removed, then the lock let go) must not take
// the transaction for abandoned: the marker it holds is no longer the
// pending one.
func TestRecoverLeavesATransactionFinishedMeanwhile(t *testing.T) {
	needRoot(t)
	tree, root := setup(t, 0, true)
	tx, err := Begin(root, tree, "tx1")
	if err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(root, pendingName, "tx1")
	f, err := os.OpenFile(marker, os.O_RDWR, 0) // what Recover opened
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if !stillPending(f, marker) {
		t.Fatal("a live transaction's marker is not pending")
	}
	if err := tx.Discard(); err != nil { // its process finishes it
		t.Fatal(err)
	}
	if stillPending(f, marker) {
		t.Fatal("a finished transaction's marker still counts as pending")
	}
	if ids, err := Recover(root, tree); err != nil || len(ids) != 0 {
		t.Fatalf("recover: %v %v", ids, err)
	}
}

// An apply killed while it copied the command's changes onto the tree's
// file system (before its journal) leaves a partial staged/: the next
// start copies them again from the layers apart and applies them.
func TestRecoverRestagesACopyCutShort(t *testing.T) {
	needRoot(t)
	tree, _ := setup(t, 0, false)
	layers := overlayTree(t, tree)
	root := filepath.Join(tree, StateDirName, "tx")
	want := expected(t, tree, destroy)
	tx, err := BeginApart(root, layers, tree, "tx1")
	if err != nil {
		t.Fatal(err)
	}
	runOver(t, tx, destroy, false)
	partial := filepath.Join(tx.Dir, stagedName, "new", "deep")
	if err := os.MkdirAll(partial, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(partial, "n"), []byte("cut sh"), 0o600); err != nil {
		t.Fatal(err)
	}
	tx.lock.Close() // its process died
	if ids, err := Recover(root, tree); err != nil || len(ids) != 1 {
		t.Fatalf("recover: %v %v", ids, err)
	}
	if got := checkpointtest.Listing(t, tree); !maps.Equal(got, want) {
		t.Fatalf("after recover:\n%s", diff(got, want))
	}
}

// TestRecoverWaitsForTheCommandsProcesses: tiny-go died, but its
// command's processes still run over the overlay for a moment (their
// SIGKILL comes late on a busy machine). A recovery that applied the
// upper layer then lost, or leaked into the tree unrecorded, what they
// wrote after it read the layer (TestKilledTurnOverOverlayIsRewound
// failed about 1 run in 8 under load): it waits for the overlay to go.
func TestRecoverWaitsForTheCommandsProcesses(t *testing.T) {
	needRoot(t)
	tree, root := setup(t, 0, false)
	tx, err := Begin(root, tree, "tx1")
	if err != nil {
		t.Fatal(err)
	}
	opts, err := Options(tx.Tree, tx.Upper(), tx.Work(), false)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("unshare", "--mount", "sh", "-c", fmt.Sprintf(
		`mount -t overlay overlay -o '%s' '%s' && cd '%s' && echo a > dir/a && sleep 1 && echo b > dir/b`, opts, tree, tree))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(tx.Upper(), "dir", "a")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the command never wrote dir/a")
		}
	}
	tx.lock.Close() // its tiny-go died here; the command runs on
	if ids, err := Recover(root, tree); err != nil || len(ids) != 1 {
		t.Fatalf("recover: %v %v", ids, err)
	}
	if err := <-done; err != nil {
		t.Fatalf("the command: %v", err)
	}
	for _, name := range []string{"a", "b"} {
		if data, err := os.ReadFile(filepath.Join(tree, "dir", name)); err != nil || string(data) != name+"\n" {
			t.Fatalf("dir/%s after the recovery: %q %v", name, data, err)
		}
	}
}
