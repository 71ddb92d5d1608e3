package overlay

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/statekey"
)

// outsideCanary is a folder outside the tree that nothing may touch.
func outsideCanary(t *testing.T) (dir string, unchanged func() bool) {
	dir = filepath.Join(t.TempDir(), "outside")
	os.Mkdir(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "precious"), []byte("keep\n"), 0o644)
	return dir, func() bool {
		entries, err := os.ReadDir(dir)
		data, _ := os.ReadFile(filepath.Join(dir, "precious"))
		return err == nil && len(entries) == 1 && string(data) == "keep\n"
	}
}

// Attack "race-swap-symlink": a background process swaps a directory of
// the tree for a symlink to an outside folder, in a tight loop, while a
// command's 40 new files in it are applied. None lands outside: each is
// applied or kept aside as a conflict.
func TestApplyRacingSymlinkSwap(t *testing.T) {
	needRoot(t)
	const rounds, files = 6, 40
	outside, unchanged := outsideCanary(t)
	for round := range rounds {
		tree, root := setup(t, 0, true)
		os.Mkdir(filepath.Join(tree, "d"), 0o755)
		tx, err := Begin(root, tree, fmt.Sprintf("race%d", round))
		if err != nil {
			t.Fatal(err)
		}
		runOver(t, tx, fmt.Sprintf("for i in $(seq 1 %d); do echo $i > d/f$i; done", files), false)
		changes, err := tx.Changes()
		if err != nil {
			t.Fatal(err)
		}
		swap := exec.Command("sh", "-c", `while :; do mv d real 2>/dev/null; ln -s '`+outside+`' d 2>/dev/null; rm -f d; mv real d 2>/dev/null; done`)
		swap.Dir = tree
		swap.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := swap.Start(); err != nil {
			t.Fatal(err)
		}
		res, err := tx.Apply(changes)
		// The whole group: an mv or ln of the loop may outlive its shell.
		syscall.Kill(-swap.Process.Pid, syscall.SIGKILL)
		swap.Wait()
		if err != nil {
			t.Fatal(err)
		}
		if !unchanged() {
			entries, _ := os.ReadDir(outside)
			t.Fatalf("round %d: %d entries in the outside folder, want only its own", round, len(entries))
		}
		// Every file is in the tree's directory (d, or real while the loop
		// was stopped mid-swap) or kept aside as a conflict.
		found := 0
		for i := 1; i <= files; i++ {
			name := fmt.Sprintf("f%d", i)
			for _, p := range []string{filepath.Join(tree, "d", name), filepath.Join(tree, "real", name), tx.Conflict("d/" + name)} {
				if _, err := os.Lstat(p); err == nil {
					found++
					break
				}
			}
		}
		if found != files {
			t.Fatalf("round %d: %d of %d files accounted for (conflicts %v)", round, found, files, res.Conflicts())
		}
		t.Logf("round %d: %d conflicts of %d", round, len(res.Conflicts()), files)
	}
}

// plantPending makes transaction id look pending as a killed process
// would leave it, with marker as its marker's content.
func plantPending(t *testing.T, root, id, marker string) string {
	dir := filepath.Join(root, id)
	os.MkdirAll(filepath.Join(root, pendingName), 0o700)
	os.MkdirAll(filepath.Join(dir, upperName), 0o700)
	os.MkdirAll(filepath.Join(dir, workName), 0o700)
	os.WriteFile(filepath.Join(dir, startName), nil, 0o600)
	os.WriteFile(filepath.Join(root, pendingName, id), []byte(marker), 0o600)
	return dir
}

func refusal(t *testing.T, err error, what string) {
	t.Helper()
	var r *RefusedError
	if !errors.As(err, &r) || r.What != what {
		t.Fatalf("want a refusal of %s, got %v", what, err)
	}
	if strings.Contains(err.Error(), "\n") {
		t.Fatalf("refusal is not one line: %q", err)
	}
}

// Attack "forged-layers": a planted transaction whose layers file names
// an outside directory, which the next start's Recover would remove.
func TestForgedLayersAreRefused(t *testing.T) {
	tree, root := t.TempDir(), filepath.Join(t.TempDir(), "tx")
	outside, unchanged := outsideCanary(t)
	for name, layers := range map[string]func(id string) []byte{
		"unsealed":            func(string) []byte { return []byte(outside) },
		"sealed for another":  func(string) []byte { b, _ := statekey.Seal("tx/other/layers", []byte(outside)); return b },
		"sealed, not its own": func(id string) []byte { b, _ := statekey.Seal("tx/"+id+"/layers", []byte(outside)); return b },
	} {
		t.Run(name, func(t *testing.T) {
			id := "f-" + strings.ReplaceAll(name, " ", "-")
			tx := &Tx{ID: id, root: root}
			mac, _ := statekey.Hex(tx.purpose(pendingName))
			dir := plantPending(t, root, id, mac)
			os.WriteFile(filepath.Join(dir, layersName), layers(id), 0o600)
			_, err := Recover(root, tree)
			refusal(t, err, "its layers file")
			if !unchanged() {
				t.Fatal("the outside folder changed")
			}
			if _, err := Recover(root, tree); err != nil {
				t.Fatalf("refused twice: %v", err)
			}
		})
	}
}

// Attack "forged-pending": a pending marker tiny-go did not write (its
// upper layer would be applied to the tree) is refused, once.
func TestForgedPendingMarkerIsRefused(t *testing.T) {
	tree, root := t.TempDir(), filepath.Join(t.TempDir(), "tx")
	dir := plantPending(t, root, "planted", "")
	os.WriteFile(filepath.Join(dir, upperName, "dropped"), []byte("x"), 0o644)
	_, err := Recover(root, tree)
	refusal(t, err, "its pending marker")
	if _, err := os.Lstat(filepath.Join(tree, "dropped")); err == nil {
		t.Fatal("a forged transaction was applied")
	}
	if _, err := Recover(root, tree); err != nil {
		t.Fatalf("refused twice: %v", err)
	}
}

// Attack "journal-through-symlink": a planted journal that would move a
// file of the tree through a symlink to an outside folder. Unsealed, it
// is refused; even one tiny-go sealed resolves its paths beneath the
// tree and never follows the symlink.
func TestJournalThroughSymlink(t *testing.T) {
	outside, unchanged := outsideCanary(t)
	for _, sealed := range []bool{false, true} {
		t.Run(fmt.Sprint("sealed=", sealed), func(t *testing.T) {
			tree, root := t.TempDir(), filepath.Join(t.TempDir(), "tx")
			os.WriteFile(filepath.Join(tree, "secret"), []byte("s"), 0o644)
			os.Symlink(outside, filepath.Join(tree, "out"))
			tx := &Tx{ID: "j", root: root}
			mac, _ := statekey.Hex(tx.purpose(pendingName))
			dir := plantPending(t, root, "j", mac)
			// Put out/precious from the upper layer (replacing what is
			// there), delete out/precious.
			os.MkdirAll(filepath.Join(dir, upperName, "out"), 0o700)
			os.WriteFile(filepath.Join(dir, upperName, "out", "precious"), []byte("pwned"), 0o644)
			j := []byte(`{"tree":"` + tree + `","changes":[{"path":"out/precious","kind":"put","had":true},{"path":"out/precious","kind":"delete"}]}`)
			if sealed {
				j, _ = statekey.Seal(tx.purpose(journalName), j)
			}
			os.WriteFile(filepath.Join(dir, journalName), j, 0o600)
			_, err := Recover(root, tree)
			if !sealed {
				refusal(t, err, "its journal")
			} else if err != nil {
				t.Fatal(err)
			}
			if !unchanged() {
				t.Fatal("the outside folder changed")
			}
		})
	}
}

// Attack "replace-key": tiny-go runs in a tree that holds its key folder
// (the home directory); a command overwrites the key, and replaces a
// directory above it. Neither is applied: both are conflicts, the key
// stays.
func TestCommandCannotReplaceTheKey(t *testing.T) {
	needRoot(t)
	tree, root := setup(t, 0, true)
	keyDir := filepath.Join(tree, "home", ".local", "state", "tiny-go")
	os.MkdirAll(keyDir, 0o700)
	real := strings.Repeat("k", statekey.Size)
	os.WriteFile(filepath.Join(keyDir, "key"), []byte(real), 0o600)
	t.Setenv(statekey.EnvDir, keyDir)
	tx, err := Begin(root, tree, "k")
	if err != nil {
		t.Fatal(err)
	}
	runOver(t, tx, "echo forged > home/.local/state/tiny-go/key && rm -rf home/.local/state && mkdir -p home/.local/state/tiny-go && echo forged > home/.local/state/tiny-go/key && echo ok > other", false)
	changes, err := tx.Changes()
	if err != nil {
		t.Fatal(err)
	}
	res, err := tx.Apply(changes)
	if err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(filepath.Join(keyDir, "key")); string(data) != real {
		t.Fatalf("the key was replaced: %q (conflicts %v)", data, res.Conflicts())
	}
	if data, _ := os.ReadFile(filepath.Join(tree, "other")); string(data) != "ok\n" {
		t.Fatal("the rest of the command's changes were not applied")
	}
	if len(res.Conflicts()) == 0 {
		t.Fatal("no conflict reported")
	}
}
