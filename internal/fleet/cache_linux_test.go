package fleet

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// --cache-memory mounts one tmpfs on the cache and, on a restart of the
// worker, keeps the one there (and what it holds).
func TestCacheInMemory(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	dir := filepath.Join(t.TempDir(), ".cache")
	t.Cleanup(func() {
		for unix.Unmount(dir, unix.MNT_DETACH) == nil {
		}
	})
	if err := cacheInMemory(dir, "16m"); err != nil {
		t.Fatal(err)
	}
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil || st.Type != unix.TMPFS_MAGIC {
		t.Fatalf("the cache is not a tmpfs: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "kept"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := cacheInMemory(dir, "16m"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "kept")); err != nil {
		t.Fatalf("a second start hid the cache: %v", err)
	}
	mounts, _ := os.ReadFile("/proc/self/mountinfo")
	if n := strings.Count(string(mounts), " "+dir+" "); n != 1 {
		t.Fatalf("%d mounts on the cache, want 1", n)
	}
	if err := cacheInMemory(filepath.Join(t.TempDir(), "c"), "1g,uid=0"); err == nil {
		t.Fatal("a size with mount options in it was taken")
	}
}
