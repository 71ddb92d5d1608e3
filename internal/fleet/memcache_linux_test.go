package fleet

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// fakeFiles reads files from a map, as autoCacheSize reads /proc and
// /sys/fs/cgroup.
func fakeFiles(files map[string]string) func(string) ([]byte, error) {
	return func(name string) ([]byte, error) {
		if s, ok := files[name]; ok {
			return []byte(s), nil
		}
		return nil, fs.ErrNotExist
	}
}

func TestAutoCacheSize(t *testing.T) {
	const gib = int64(1) << 30
	meminfo := "MemTotal:       16777216 kB\nMemFree:         1000 kB\n" // 16 GiB
	for _, c := range []struct {
		name  string
		files map[string]string
		want  int64
	}{
		{"no cgroup file: the machine's memory", map[string]string{"/proc/meminfo": meminfo}, 4 * gib},
		{"v2 without a limit", map[string]string{"/proc/meminfo": meminfo, "/proc/self/cgroup": "0::/a/b\n",
			"/sys/fs/cgroup/a/b/memory.max": "max\n"}, 4 * gib},
		{"v2 limit of its own cgroup", map[string]string{"/proc/meminfo": meminfo, "/proc/self/cgroup": "0::/a/b\n",
			"/sys/fs/cgroup/a/b/memory.max": "2147483648\n"}, gib / 2},
		{"v2 limit of a cgroup above binds too", map[string]string{"/proc/meminfo": meminfo, "/proc/self/cgroup": "0::/a/b\n",
			"/sys/fs/cgroup/a/b/memory.max": "max\n", "/sys/fs/cgroup/a/memory.max": "4294967296\n"}, gib},
		{"v2 in a cgroup namespace: its root", map[string]string{"/proc/meminfo": meminfo, "/proc/self/cgroup": "0::/\n",
			"/sys/fs/cgroup/memory.max": "1073741824\n"}, gib / 4},
		{"a limit above the machine's memory", map[string]string{"/proc/meminfo": meminfo, "/proc/self/cgroup": "0::/a\n",
			"/sys/fs/cgroup/a/memory.max": "68719476736\n"}, 4 * gib},
		{"v1 memory controller", map[string]string{"/proc/meminfo": meminfo,
			"/proc/self/cgroup": "4:memory:/job\n2:cpu,cpuacct:/job\n0::/\n",
			"/sys/fs/cgroup/memory/job/memory.limit_in_bytes": "8589934592\n",
			"/sys/fs/cgroup/memory/memory.limit_in_bytes":     "9223372036854771712\n"}, 2 * gib},
		{"a path leaving the namespace reads only its root", map[string]string{"/proc/meminfo": meminfo,
			"/proc/self/cgroup": "0::/../../x\n", "/sys/fs/x/memory.max": "1048576\n",
			"/sys/fs/cgroup/memory.max": "max\n"}, 4 * gib},
		{"rounded down to pages", map[string]string{"/proc/meminfo": "MemTotal: 4097 kB\n"},
			4097 * 1024 / 4 / int64(os.Getpagesize()) * int64(os.Getpagesize())},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := autoCacheSize(fakeFiles(c.files))
			if err != nil || got != c.want {
				t.Fatalf("autoCacheSize = %d, %v; want %d", got, err, c.want)
			}
		})
	}
	for _, bad := range []string{"", "MemFree: 100 kB\n", "MemTotal: lots kB\n", "MemTotal: 100\n", "MemTotal: 4 kB\n"} {
		if got, err := autoCacheSize(fakeFiles(map[string]string{"/proc/meminfo": bad})); err == nil {
			t.Errorf("meminfo %q: size %d, want an error", bad, got)
		}
	}
}

// FuzzAutoCacheSize feeds the parsers of /proc/meminfo, /proc/self/cgroup
// and memory.max: a size is whole pages, above nothing, and never above
// a quarter of either limit.
func FuzzAutoCacheSize(f *testing.F) {
	f.Add("MemTotal:       24683792 kB\n", "0::/a\n", "max\n")
	f.Add("MemTotal: 1 kB\n", "4:memory:/a/b\n", "123456789\n")
	f.Add("MemTotal:\n", "0::\n", "-1")
	f.Fuzz(func(t *testing.T, meminfo, cgroup, limit string) {
		files := map[string]string{"/proc/meminfo": meminfo, "/proc/self/cgroup": cgroup}
		for _, f := range cgroupLimitFiles([]byte(cgroup)) {
			if !strings.HasPrefix(f, "/sys/fs/cgroup/") {
				t.Fatalf("%q leaves /sys/fs/cgroup", f)
			}
			files[f] = limit
		}
		size, err := autoCacheSize(fakeFiles(files))
		if err != nil {
			return
		}
		total, ok := parseMemTotal([]byte(meminfo))
		page := int64(os.Getpagesize())
		if !ok || size <= 0 || size%page != 0 || size > total/4 {
			t.Fatalf("size %d (MemTotal %d, %v)", size, total, ok)
		}
		if n, ok := parseMemoryMax([]byte(limit)); ok && len(cgroupLimitFiles([]byte(cgroup))) > 0 && size > n/4 {
			t.Fatalf("size %d over a quarter of the limit %d", size, n)
		}
	})
}

// needRoot fails rather than skips in CI (which runs as root): these
// tests mount.
func needRoot(t *testing.T) {
	if os.Geteuid() != 0 && os.Getenv("CI") == "" {
		t.Skip("mounting a tmpfs needs root")
	}
}

func unmountAll(t *testing.T, dir string) {
	t.Cleanup(func() {
		for unix.Unmount(dir, unix.MNT_DETACH) == nil {
		}
	})
}

// mountSize is the size= of the mount on dir in /proc/self/mountinfo.
func mountSize(t *testing.T, dir string) string {
	mounts, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(mounts)) {
		f := strings.Fields(line)
		if len(f) > 4 && f[4] == dir {
			for _, o := range strings.Split(f[len(f)-1], ",") {
				if v, ok := strings.CutPrefix(o, "size="); ok {
					return v
				}
			}
		}
	}
	return ""
}

// --cache-memory auto (the default) mounts a tmpfs of a quarter of the
// memory the worker may use on the cache.
func TestCacheAutoMountsAQuarterOfMemory(t *testing.T) {
	needRoot(t)
	dir := filepath.Join(t.TempDir(), ".cache")
	unmountAll(t, dir)
	var stderr bytes.Buffer
	inMemory, err := prepareCache(dir, cacheAuto, &stderr)
	if err != nil || !inMemory || stderr.Len() > 0 {
		t.Fatalf("prepareCache auto = %v, %v; stderr %q", inMemory, err, stderr.String())
	}
	want, err := autoCacheSize(os.ReadFile)
	if err != nil {
		t.Fatal(err)
	}
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil || st.Type != unix.TMPFS_MAGIC {
		t.Fatalf("the cache is not a tmpfs: %v", err)
	}
	if got := int64(st.Blocks) * st.Bsize; got != want {
		t.Fatalf("the tmpfs holds %d bytes, want %d", got, want)
	}
	if got := mountSize(t, dir); got != fmt.Sprintf("%dk", want>>10) {
		t.Fatalf("mountinfo says size=%s, want %dk", got, want>>10)
	}
}

// --cache-memory off leaves the cache on the disk's file system.
func TestCacheOffStaysOnDisk(t *testing.T) {
	needRoot(t)
	dir := filepath.Join(t.TempDir(), ".cache")
	unmountAll(t, dir)
	inMemory, err := prepareCache(dir, cacheOff, &bytes.Buffer{})
	if err != nil || inMemory {
		t.Fatalf("prepareCache off = %v, %v", inMemory, err)
	}
	var st unix.Statfs_t
	if err := unix.Statfs(filepath.Dir(dir), &st); err == nil && st.Type == unix.TMPFS_MAGIC {
		t.Skip("the test's folder is itself on a tmpfs")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Statfs(dir, &st); err != nil || st.Type == unix.TMPFS_MAGIC {
		t.Fatalf("off mounted a tmpfs: %v", err)
	}
	if mountSize(t, dir) != "" {
		t.Fatal("off mounted something on the cache")
	}
}

// A worker that may not mount (here root in a user namespace of its own,
// without CAP_SYS_ADMIN over the machine's mounts) keeps its cache on
// disk, says so in one line, and goes on.
func TestCacheAutoWithoutMountStaysOnDisk(t *testing.T) {
	needRoot(t)
	bin := filepath.Join(t.TempDir(), "tiny-go-fleet")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/tiny-go-fleet").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	work := t.TempDir()
	unmountAll(t, filepath.Join(work, ".cache"))
	cmd := exec.Command(bin, "worker", "--temporal", "127.0.0.1:1", "--blob", "file://"+t.TempDir(),
		"--work-dir", work, "--tiny-go", "/bin/true")
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1}}}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() == 2 {
		t.Fatalf("the worker: %v (want it past its flags, failing to reach Temporal); stderr:\n%s", err, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	if !strings.Contains(lines[0], "cached bases stay on disk") || !strings.Contains(lines[0], "CAP_SYS_ADMIN") {
		t.Fatalf("no line says the cache stays on disk and how to have it in memory:\n%s", stderr.String())
	}
	if strings.Count(stderr.String(), "cached bases") != 1 {
		t.Fatalf("want one line about the cache:\n%s", stderr.String())
	}
	var st unix.Statfs_t
	if err := unix.Statfs(filepath.Join(work, ".cache"), &st); err == nil && st.Type == unix.TMPFS_MAGIC {
		t.Fatal("the cache is a tmpfs")
	}
}

// A base that does not fit in a full memory cache is built on disk, and
// found there: when it fails for ENOSPC in memory, and at once when the
// memory cache has less room than the base needs.
func TestFullMemoryCacheBuildsOnDisk(t *testing.T) {
	needRoot(t)
	work := t.TempDir()
	mem := filepath.Join(work, cacheDir)
	unmountAll(t, mem)
	if err := cacheInMemory(mem, "256k"); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	full := 0
	c := baseCache{dir: filepath.Join(mem, "bases"), disk: filepath.Join(work, cacheDiskDir, "bases"), full: func() { full++ }}
	builds := 0
	base := func(size int) func(string) error {
		return func(dir string) error {
			builds++
			return os.WriteFile(filepath.Join(dir, "f"), make([]byte, size), 0o644)
		}
	}
	small, err := c.entry(ctx, "small", nil, base(1000))
	if err != nil || !strings.HasPrefix(small, c.dir+"/") || full != 0 {
		t.Fatalf("a small base: %s, %v (full %d); want it in memory", small, err, full)
	}
	builds = 0
	got, err := c.entry(ctx, "big", nil, base(512<<10))
	if err != nil || !strings.HasPrefix(got, c.disk+"/") || full != 1 || builds != 2 {
		t.Fatalf("a big base: %s, %v (full %d, %d builds); want it on disk after a try in memory", got, err, full, builds)
	}
	if _, err := os.Stat(filepath.Join(got, ".done")); err != nil {
		t.Fatal(err)
	}
	if leftovers, _ := filepath.Glob(filepath.Join(c.dir, ".build-*")); len(leftovers) > 0 {
		t.Fatalf("half-built bases left in memory: %v", leftovers)
	}
	asked := func() int64 { t.Error("the room a cached base needs was asked (a blob request per task)"); return 0 }
	if again, err := c.entry(ctx, "big", asked, base(512<<10)); err != nil || again != got || builds != 2 {
		t.Fatalf("looked up again: %s, %v after %d builds; want %s unbuilt", again, err, builds, got)
	}
	if again, err := c.entry(ctx, "small", nil, base(1000)); err != nil || again != small {
		t.Fatalf("the small base looked up again: %s, %v", again, err)
	}
	builds = 0
	known, err := c.entry(ctx, "known size", func() int64 { return 1 << 20 }, base(1000))
	if err != nil || !strings.HasPrefix(known, c.disk+"/") || builds != 1 {
		t.Fatalf("a base known to need 1 MB: %s, %v after %d builds; want it built on disk only", known, err, builds)
	}
}
