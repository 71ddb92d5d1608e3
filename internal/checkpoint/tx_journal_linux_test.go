//go:build linux && (amd64 || arm64)

package checkpoint

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/checkpoint/checkpointtest"
	"github.com/tiny-agent/tiny-go/internal/journal"
	"golang.org/x/sys/unix"
)

// journalTask is a task whose bash effects run on the tree under the
// journal, as bash runs them with TINY_TX=journal.
func journalTask(t *testing.T) *task {
	dir := t.TempDir()
	k := newTask(t, dir, Options{DisableGit: true, Journal: true})
	k.rec.EnableTx(func() error { return nil }, func(l string) { t.Log(l) })
	t.Cleanup(func() { k.store.Close() })
	return k
}

func (k *task) journaled(script string) {
	k.t.Helper()
	k.n++
	id := "call-" + string(rune('a'+k.n))
	after := k.rec.BeforeEffect(context.Background(), id, "bash", []byte(`{"command":"x"}`))
	txn := k.rec.Txn(id)
	if txn == nil {
		k.t.Fatal("no transaction for a bash call")
	}
	tree, jdir, ok := txn.Journal()
	if !ok {
		k.t.Fatal("the transaction is not journaled")
	}
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.Dir = tree
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	sess, err := journal.Start(cmd, tree, jdir)
	if err != nil {
		k.t.Fatal(err)
	}
	if err := sess.Wait(); err != nil {
		k.t.Fatalf("%s: %v\n%s", script, err, out.String())
	}
	after()
}

// Every turn of journaled commands (appends, in-place writes, renames
// of files and folders, links, removals, modes), mixed with the write
// tool, is rewound exactly, from the newest turn back to the first.
func TestJournaledTurnsAreRewoundExactly(t *testing.T) {
	k := journalTask(t)
	dir := k.dir
	checkpointtest.Sh(t, dir, `mkdir -p src/lib empty && echo old > doc.md && printf 'package main\n' > src/main.go &&
		echo a > src/lib/a.go && echo b > src/lib/b.go && echo log1 > app.log && ln src/lib/a.go hard.go &&
		head -c 300000 /dev/urandom > big.bin && mkfifo pipe`)
	turns := []string{
		`echo log2 >> app.log; sed -i s/old/new/ doc.md; mkdir -p gen/deep && echo x > gen/deep/out.txt; chmod 600 src/main.go`,
		`mv src/lib src/pkg; echo c > src/pkg/c.go; rm src/pkg/b.go; rmdir empty; ln -s doc.md link; rm pipe`,
		`printf 'XYZ' | dd of=big.bin bs=1 seek=1000 conv=notrunc 2>/dev/null; echo more >> hard.go; mv doc.md src/pkg/a.go; touch -d 2001-01-01 gen`,
		`mv src/pkg lib; mkdir src/pkg; echo fresh > src/pkg/new.go; truncate -s 10 big.bin; mkfifo p2`,
	}
	var listings []map[string]string
	var starts []int
	for i, script := range turns {
		listings = append(listings, checkpointtest.Listing(t, dir))
		starts = append(starts, len(k.records()))
		k.journaled(script)
		if i == 1 {
			// As the write tool writes: a new inode renamed in.
			k.effect("write", `{"path":"src/pkg/a.go"}`, func() {
				writeFile(t, dir, "src/pkg/a.go.tmp", "written\n")
				if err := os.Rename(filepath.Join(dir, "src/pkg/a.go.tmp"), filepath.Join(dir, "src/pkg/a.go")); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
	for i := len(turns) - 1; i >= 0; i-- {
		sum := k.rewind(starts[i], false)
		if len(sum.Skipped) > 0 {
			t.Errorf("turn %d: skipped %v", i+1, sum.Skipped)
		}
		got := checkpointtest.Listing(t, dir)
		for p, v := range listings[i] {
			if got[p] != v {
				t.Errorf("turn %d: %s is %q, want %q", i+1, p, got[p], v)
			}
		}
		for p, v := range got {
			if _, ok := listings[i][p]; !ok {
				t.Errorf("turn %d: %s (%s) is left", i+1, p, v)
			}
		}
		k.index.Truncate(len(recordsPrefix(k, starts[i])))
	}
}

// recordsPrefix is the index up to (not including) record n.
func recordsPrefix(k *task, n int) []byte {
	b := k.index.Bytes()
	for i, off := 0, 0; ; i++ {
		if i == n {
			return b[:off]
		}
		j := strings.IndexByte(string(b[off:]), '\n')
		if j < 0 {
			return b
		}
		off += j + 1
	}
}

// An append to a big file keeps its length, not the file: the
// transaction takes no more than its journal, and the rewind cuts the
// file back in place.
func TestJournaledAppendKeepsLittle(t *testing.T) {
	k := journalTask(t)
	f, err := os.Create(filepath.Join(k.dir, "big.log"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(200 << 20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	before := statOf(t, filepath.Join(k.dir, "big.log"))
	k.journaled(`echo line >> big.log`)
	recs := k.records()
	last := recs[len(recs)-1]
	if last.Tx == "" || last.Bytes > 64<<10 {
		t.Fatalf("the append kept %d bytes (tx %q)", last.Bytes, last.Tx)
	}
	if sum := k.rewind(0, false); len(sum.Skipped) != 0 {
		t.Fatalf("the rewind skipped: %+v", sum.Skipped)
	}
	after := statOf(t, filepath.Join(k.dir, "big.log"))
	if after.Ino != before.Ino || after.Size != before.Size || after.Mtim != before.Mtim {
		t.Errorf("big.log after the rewind: inode %d, %d bytes, mtime %v; want %d, %d, %v", after.Ino, after.Size, after.Mtim, before.Ino, before.Size, before.Mtim)
	}
}

func statOf(t *testing.T, p string) unix.Stat_t {
	t.Helper()
	var sb unix.Stat_t
	if err := unix.Lstat(p, &sb); err != nil {
		t.Fatal(err)
	}
	return sb
}

// Files past what a rewind reads whole (here 1 MiB), appended to and
// written in place over three turns, are put back exactly, in place:
// across all three turns at once, and one turn at a time. A rewind cut
// short and run again gives the same; a file changed since is named.
func TestJournaledBigFilesAreRewoundInPlace(t *testing.T) {
	setup := `head -c 2000000 /dev/urandom > big.log && head -c 3000000 /dev/urandom > db.bin && touch -d 2001-01-01 big.log db.bin`
	turns := []string{
		`echo one >> big.log`,
		`echo two >> big.log; python3 -c 'f = open("db.bin", "r+b"); f.seek(100); f.write(b"X" * 5000); f.seek(2500000); f.write(b"Y" * 70000)'`,
		`python3 -c 'f = open("db.bin", "r+b"); f.seek(90); f.write(b"Z" * 200); f.truncate(2000000)'; echo three >> big.log; chmod 600 big.log`,
	}
	play := func(t *testing.T) (*task, []map[string]string, []int) {
		dir := t.TempDir()
		k := newTask(t, dir, Options{DisableGit: true, Journal: true, MaxFileSize: 1 << 20})
		k.rec.EnableTx(func() error { return nil }, func(l string) { t.Log(l) })
		t.Cleanup(func() { k.store.Close() })
		checkpointtest.Sh(t, dir, setup)
		var listings []map[string]string
		var starts []int
		// What each turn destroys: nothing, 75 kB, the 1 MB a cut takes.
		keeps := []int64{64 << 10, 200 << 10, 1200 << 10}
		for i, script := range turns {
			listings = append(listings, bigListing(t, dir))
			starts = append(starts, len(k.records()))
			k.journaled(script)
			if last := k.records()[len(k.records())-1]; last.Bytes > keeps[i] {
				t.Fatalf("%s kept %d bytes", script, last.Bytes)
			}
		}
		return k, listings, starts
	}
	check := func(t *testing.T, dir string, want map[string]string) {
		t.Helper()
		if got := bigListing(t, dir); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("after the rewind:\n%v\nwant\n%v", got, want)
		}
	}
	t.Run("all at once", func(t *testing.T) {
		k, listings, starts := play(t)
		if sum := k.rewind(starts[0], false); len(sum.Skipped) != 0 {
			t.Fatalf("skipped: %+v", sum.Skipped)
		}
		check(t, k.dir, listings[0])
	})
	t.Run("one at a time", func(t *testing.T) {
		k, listings, starts := play(t)
		for i := len(turns) - 1; i >= 0; i-- {
			if sum := k.rewind(starts[i], false); len(sum.Skipped) != 0 {
				t.Fatalf("turn %d: skipped %+v", i+1, sum.Skipped)
			}
			check(t, k.dir, listings[i])
			k.index.Truncate(len(recordsPrefix(k, starts[i])))
		}
	})
	t.Run("cut short, then again", func(t *testing.T) {
		k, listings, starts := play(t)
		plan, err := k.store.PlanRewind(context.Background(), k.records()[starts[0]:], false)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range plan.Actions {
			if len(a.Patches) > 1 {
				f, err := os.OpenFile(filepath.Join(k.dir, a.Path), os.O_WRONLY, 0)
				if err != nil {
					t.Fatal(err)
				}
				pts, dirs, err := k.store.loadPatches(a.Patches)
				if err != nil {
					t.Fatal(err)
				}
				if err := applyPatch(f, pts[0], dirs[0]); err != nil { // the newest only
					t.Fatal(err)
				}
				f.Close()
			}
		}
		sum, _, err := k.store.Apply(context.Background(), plan, false)
		if err != nil || len(sum.Skipped) != 0 {
			t.Fatalf("the second apply: %v, skipped %+v", err, sum.Skipped)
		}
		check(t, k.dir, listings[0])
	})
	t.Run("changed since", func(t *testing.T) {
		k, _, starts := play(t)
		checkpointtest.Sh(t, k.dir, `echo outside >> big.log`)
		sum := k.rewind(starts[0], false)
		if len(sum.Skipped) != 1 || sum.Skipped[0].Path != "big.log" || !strings.Contains(sum.Skipped[0].Reason, "changed since") {
			t.Fatalf("the rewind: %+v", sum)
		}
	})
}

// bigListing is Listing with each file's size and modification time.
func bigListing(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := checkpointtest.Listing(t, dir)
	for p, v := range out {
		fi, err := os.Lstat(filepath.Join(dir, p))
		if err == nil && fi.Mode().IsRegular() {
			out[p] = fmt.Sprintf("%s %d %d", v, fi.Size(), fi.ModTime().UnixNano())
		}
	}
	return out
}
