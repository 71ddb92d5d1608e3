//go:build linux && (amd64 || arm64)

package checkpoint

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/checkpoint/checkpointtest"
	"github.com/tiny-agent/tiny-go/internal/journal"
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
// transaction takes no more than its journal.
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
	k.journaled(`echo line >> big.log`)
	recs := k.records()
	last := recs[len(recs)-1]
	if last.Tx == "" || last.Bytes > 64<<10 {
		t.Fatalf("the append kept %d bytes (tx %q)", last.Bytes, last.Tx)
	}
	// Past the rewind's 64 MiB, the file is named, not put back.
	sum := k.rewind(0, false)
	if len(sum.Skipped) != 1 || sum.Skipped[0].Path != "big.log" || !strings.Contains(sum.Skipped[0].Reason, "larger than") {
		t.Fatalf("the rewind: %+v", sum)
	}
}
