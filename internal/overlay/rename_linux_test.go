package overlay

import (
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/tiny-agent/tiny-go/internal/beneath"
	"github.com/tiny-agent/tiny-go/internal/checkpoint/checkpointtest"
)

// renameSeed adds to seedTree the directories the rename cases move.
const renameSeed = `mkdir -p big/sub a/b p/q n x y k m && for i in $(seq 1 20); do echo $i > big/f$i; done &&
echo deep > big/sub/deep && ln -s f1 big/link && mkfifo big/fifo && chmod 750 big/sub &&
echo a > a/b/f && echo q > p/q/f && echo n > n/f && echo x > x/f && echo y > y/f && echo k > k/f && echo m > m/f`

// renames moves directories every way a command can: a plain rename
// with changes inside (python's os.rename, which never copies), one into
// another directory, a chain inside a renamed one, one into a directory
// the command made, a swap, a source made again, a mode changed.
const renames = `python3 -c 'import os; os.rename("big", "big2")' && echo new > big2/new && rm big2/f2 && echo more >> big2/f3 &&
mv a/b moved_b && mv p p2 && mv p2/q p2/q2 && mv n p2/q2/n && mkdir made && mv m made/m &&
mv x t && mv y x && mv t y && mv k k2 && mkdir k && echo again > k/again && chmod 700 k2`

// TestRenamedDirectoriesAreMovedNotCopied: mounted with redirect_dir=on,
// a command's renames of the tree's directories are applied as renames
// of the same directories (the files keep their inodes: nothing is
// copied), kept for a rewind as hard links in orig/, and the tree ends as
// the command run directly leaves it. The cases a rename cannot carry
// are copied and end the same.
func TestRenamedDirectoriesAreMovedNotCopied(t *testing.T) {
	needRoot(t)
	for _, c := range []struct {
		name  string
		apart bool
	}{{"root", false}, {"root/tree-is-an-overlay", true}} {
		t.Run(c.name, func(t *testing.T) {
			tree, root := setup(t, 0, true)
			sh(t, tree, renameSeed)
			layers := ""
			if c.apart {
				layers = overlayTree(t, tree)
			}
			want := expected(t, tree, renames)
			ino := statOf(t, filepath.Join(tree, "big/f1")).Ino
			bigBefore := checkpointtest.Listing(t, filepath.Join(tree, "big"))
			tx, err := BeginApart(root, layers, tree, "tx1")
			if err != nil {
				t.Fatal(err)
			}
			runOver(t, tx, renames, false)
			changes, err := tx.Changes()
			if err != nil {
				t.Fatal(err)
			}
			var moved []string
			for _, ch := range changes {
				if ch.Kind == Rename {
					moved = append(moved, ch.From+"->"+ch.Path)
				}
			}
			// p2/q2 (its source inside p's) and n in it, x and y (each
			// onto the other's source) and made/m (inside a new
			// directory) are copied; the rest are renames.
			if got := strings.Join(moved, " "); got != "big->big2 k->k2 a/b->moved_b p->p2" {
				t.Errorf("renames %q", got)
			}
			if _, err := tx.Apply(changes); err != nil {
				t.Fatal(err)
			}
			if got := checkpointtest.Listing(t, tree); !maps.Equal(got, want) {
				t.Fatalf("after apply:\n%v\nwant\n%v\nchanges %+v", got, want, changes)
			}
			if got := statOf(t, filepath.Join(tree, "big2/f1")).Ino; got != ino {
				t.Errorf("big2/f1 is inode %d, the tree's big/f1 was %d: copied", got, ino)
			}
			if got := statOf(t, tx.Orig("big/f1")).Ino; got != ino {
				t.Errorf("the kept big/f1 is inode %d, want the moved file's %d", got, ino)
			}
			// The mirror is the source as it was (modes included): f2
			// and f3's old content, not the new file.
			if mirror := checkpointtest.Listing(t, tx.Orig("big")); !maps.Equal(mirror, bigBefore) {
				t.Errorf("orig/big:\n%v\nwant\n%v", mirror, bigBefore)
			}
			assertNoMarks(t, tree)
			checkNoRedirects(t, tree)
		})
	}
}

// TestRenamedDirectoryApplyRunAgain: an apply cut short after a renamed
// directory's mirror (or after its rename) and run again from the
// journal ends as one that ran through.
func TestRenamedDirectoryApplyRunAgain(t *testing.T) {
	needRoot(t)
	for _, upTo := range []int{0, 1} {
		tree, root := setup(t, 0, true)
		sh(t, tree, renameSeed)
		want := expected(t, tree, renames)
		tx, err := Begin(root, tree, "tx1")
		if err != nil {
			t.Fatal(err)
		}
		runOver(t, tx, renames, false)
		changes, err := tx.Changes()
		if err != nil {
			t.Fatal(err)
		}
		r, err := tx.openRoots()
		if err != nil {
			t.Fatal(err)
		}
		c := changes[0]
		fd, name := parentOf(t, r.tree, c.From)
		if err := tx.mirror(fd, name, c.From); err != nil {
			t.Fatal(err)
		}
		os.Remove(tx.Orig(c.From + "/f5")) // a mirror cut short
		if upTo == 1 {
			if err := tx.step(r, c); err != nil {
				t.Fatal(err)
			}
		}
		r.close()
		if _, err := tx.Apply(changes); err != nil {
			t.Fatal(err)
		}
		if got := checkpointtest.Listing(t, tree); !maps.Equal(got, want) {
			t.Fatalf("run again after %d steps:\n%v\nwant\n%v", upTo, got, want)
		}
		if upTo == 0 {
			if _, err := os.Lstat(tx.Orig(c.From + "/f5")); err != nil {
				t.Fatalf("the mirror was not finished: %v", err)
			}
		}
	}
}

// TestRenamedDirectoryWhoseSourceWentIsAConflict: a directory the
// command renamed, removed from the tree by another program meanwhile, is
// a conflict: the command's version is kept aside, the rest applied.
func TestRenamedDirectoryWhoseSourceWentIsAConflict(t *testing.T) {
	needRoot(t)
	tree, root := setup(t, 0, true)
	sh(t, tree, renameSeed)
	tx, err := Begin(root, tree, "tx1")
	if err != nil {
		t.Fatal(err)
	}
	runOver(t, tx, "mv big big2 && echo new > big2/new && echo k > keep.txt", false)
	if lines := strings.Join(tx.Preview(mustChanges(t, tx)), "\n"); !strings.Contains(lines, "renamed   big -> big2") {
		t.Errorf("the preview:\n%s", lines)
	}
	sh(t, tree, "rm -rf big")
	changes := mustChanges(t, tx)
	res, err := tx.Apply(changes)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(res.Conflicts(), " "); got != "big2" {
		t.Errorf("conflicts %q", got)
	}
	if data, err := os.ReadFile(filepath.Join(tx.Conflict("big2"), "new")); err != nil || string(data) != "new\n" {
		t.Errorf("the command's version: %q %v", data, err)
	}
	if data, _ := os.ReadFile(filepath.Join(tree, "keep.txt")); string(data) != "k\n" {
		t.Errorf("keep.txt: %q", data)
	}
}

func mustChanges(t *testing.T, tx *Tx) []Change {
	t.Helper()
	changes, err := tx.Changes()
	if err != nil {
		t.Fatal(err)
	}
	return changes
}

func parentOf(t *testing.T, root int, rel string) (int, string) {
	t.Helper()
	fd, name, err := beneath.Parent(root, rel, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	return fd, name
}

func checkNoRedirects(t *testing.T, tree string) {
	t.Helper()
	filepath.WalkDir(tree, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() && redirectOf(p) != "" {
			t.Errorf("%s carries overlay.redirect", p)
		}
		return nil
	})
}
