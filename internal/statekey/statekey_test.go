package statekey

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/unix"
)

func reset(t *testing.T) string {
	dir := filepath.Join(t.TempDir(), "state", "tiny-go")
	t.Setenv(EnvDir, dir)
	once, key, keyErr = sync.Once{}, nil, nil
	t.Cleanup(func() { once, key, keyErr = sync.Once{}, nil, nil })
	return dir
}

// The key is created once, 0600 (root's: 0400) in a 0700 directory, and many first
// uses at once agree on it.
func TestKeyCreatedOnceAtomically(t *testing.T) {
	dir := reset(t)
	var wg sync.WaitGroup
	keys := make([][]byte, 16)
	for i := range keys {
		wg.Go(func() {
			k, err := load(dir)
			if err != nil {
				t.Error(err)
			}
			keys[i] = k
		})
	}
	wg.Wait()
	for _, k := range keys[1:] {
		if !bytes.Equal(k, keys[0]) || len(k) != Size {
			t.Fatalf("first uses disagree: %x vs %x", k, keys[0])
		}
	}
	fi, err := os.Stat(filepath.Join(dir, "key"))
	want := os.FileMode(0o600)
	if os.Geteuid() == 0 {
		want = 0o400 // root's is keeperUID's (TestRootsKeyIsKeptFromCapabilitylessRoot)
	}
	if err != nil || fi.Mode().Perm() != want {
		t.Fatalf("key: %v %v", fi, err)
	}
	di, _ := os.Stat(dir)
	if di.Mode().Perm() != 0o700 {
		t.Fatalf("key dir mode %v", di.Mode())
	}
	left, _ := filepath.Glob(filepath.Join(dir, ".key-*"))
	if len(left) != 0 {
		t.Fatalf("temporary files left: %v", left)
	}
}

// A key others can read, or a symlink in its place, is refused.
func TestKeyRefusesLooseFiles(t *testing.T) {
	dir := reset(t)
	if _, err := Key(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "key")
	os.Chmod(path, 0o644)
	if _, err := load(dir); err == nil {
		t.Fatal("a key readable by others was used")
	}
	os.Chmod(path, 0o600)
	os.Rename(path, path+".real")
	os.Symlink(path+".real", path)
	if _, err := load(dir); err == nil {
		t.Fatal("a symlinked key was used")
	}
}

func TestSealOpen(t *testing.T) {
	reset(t)
	sealed, err := Seal("tx-journal:a", []byte("data\nmore"))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := Open("tx-journal:a", sealed); err != nil || string(got) != "data\nmore" {
		t.Fatalf("Open: %q %v", got, err)
	}
	if _, err := Open("tx-journal:b", sealed); !errors.Is(err, ErrForged) {
		t.Fatalf("another purpose: %v", err)
	}
	forged := bytes.Replace(sealed, []byte("more"), []byte("mora"), 1)
	if _, err := Open("tx-journal:a", forged); !errors.Is(err, ErrForged) {
		t.Fatalf("changed data: %v", err)
	}
	if _, err := Open("tx-journal:a", []byte("data")); !errors.Is(err, ErrUnsealed) {
		t.Fatalf("unsealed: %v", err)
	}
	// Another key (another user, or a key replaced) opens nothing.
	reset(t)
	if _, err := Open("tx-journal:a", sealed); !errors.Is(err, ErrForged) {
		t.Fatalf("another key: %v", err)
	}
}

func TestSumSeparatesParts(t *testing.T) {
	reset(t)
	a, _ := Hex("p", []byte("ab"), []byte("c"))
	b, _ := Hex("p", []byte("a"), []byte("bc"))
	if a == b {
		t.Fatal("parts run together")
	}
	if ok, _ := Check(a, "p", []byte("ab"), []byte("c")); !ok {
		t.Fatal("Check refused its own sum")
	}
}

// BenchmarkSeal: what sealing a transaction's states.json of 100
// entries costs (the key is read once per process).
func BenchmarkSeal(b *testing.B) {
	b.Setenv(EnvDir, b.TempDir())
	once, key, keyErr = sync.Once{}, nil, nil
	data := bytes.Repeat([]byte(`{"path":"src/pkg/file.go","hash":"sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef","mode":420},`), 100)
	for b.Loop() {
		if _, err := Seal("tx/id/states.json", data); err != nil {
			b.Fatal(err)
		}
	}
}

// As root the key belongs to keeperUID, mode 0400: a process of root
// without capabilities (as commands run) cannot read it; tiny-go can,
// and takes the same key again.
func TestRootsKeyIsKeptFromCapabilitylessRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("root's key: run as root (CI is)")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Fatal("setpriv is needed (CI installs util-linux)")
	}
	dir := t.TempDir()
	os.Chmod(dir, 0o700)
	k, err := load(dir)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "key")
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		t.Fatal(err)
	}
	if st.Uid != keeperUID || st.Mode&0o777 != 0o400 {
		t.Fatalf("key owned by %d, mode %o; want %d, 0400", st.Uid, st.Mode&0o777, keeperUID)
	}
	again, err := load(dir)
	if err != nil || !bytes.Equal(again, k) {
		t.Fatalf("the key read again: %v (same: %v)", err, bytes.Equal(again, k))
	}
	out, err := exec.Command(setpriv, "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "cat", path).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "Permission denied") {
		t.Fatalf("a root without capabilities read the key: %v %q", err, out)
	}
}
