package checkpoint

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/testenv"
)

// A working directory that is itself an overlay cannot hold a command's
// upper layer: without TINY_OVERLAY_LAYERS the transaction is refused with
// a line that says what to do; with it, the layers go there.
func TestTxLayersApartOnAnOverlay(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting an overlay needs root")
	}
	base := t.TempDir()
	cwd := filepath.Join(base, "cwd")
	for _, d := range []string{"lower", "up", "ovl", "cwd"} {
		if err := os.Mkdir(filepath.Join(base, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	opts := "lowerdir=" + base + "/lower,upperdir=" + base + "/up,workdir=" + base + "/ovl,redirect_dir=on,metacopy=off,index=off"
	if err := testenv.MountOverlay(cwd, opts); err != nil {
		t.Fatalf("mount: %v", err)
	}
	t.Cleanup(func() { testenv.Unmount(cwd) })

	cs, err := Open(cwd, Options{DisableGit: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.BeginTx(); err == nil || !strings.Contains(err.Error(), "set TINY_OVERLAY_LAYERS") {
		t.Fatalf("a transaction on an overlay without layers apart: %v", err)
	}
	cs.Close()

	layers := filepath.Join(base, "layers")
	cs, err = Open(cwd, Options{DisableGit: true, TxLayers: layers})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	txn, err := cs.BeginTx()
	if err != nil {
		t.Fatal(err)
	}
	_, upper, work := txn.Dirs()
	for _, d := range []string{upper, work} {
		if !strings.HasPrefix(d, layers+"/") {
			t.Errorf("%s is not in the layers apart %s", d, layers)
		}
	}
	if err := os.WriteFile(filepath.Join(upper, "made.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := txn.Commit(); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(filepath.Join(cwd, "made.txt")); err != nil || string(data) != "x" {
		t.Fatalf("the command's file was not applied: %q %v", data, err)
	}
	if _, err := os.Stat(upper); !os.IsNotExist(err) {
		t.Fatalf("the layers apart were left: %v", err)
	}
}
