package fleet

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// The worker's cache of bases is in memory by default (--cache-memory
// auto): creating a cold base's 20,000 files took 3.6 s of kernel time
// on this VM's ext4 and 0.1 s on a tmpfs (docs/performance.md §28).
//
// A tmpfs's pages are charged to the memory cgroup of whoever writes
// them, so an unbounded one could get the worker's agents OOM-killed:
// auto sizes it to a quarter of the memory the worker may use. A base
// that does not fit is built on disk instead (baseCache.disk).
const (
	cacheAuto = "auto"
	cacheOff  = "off"
)

// cacheDirs are the folders of a worker's cache under its --work-dir.
const (
	cacheDir     = ".cache"      // the cache (a tmpfs unless off)
	cacheDiskDir = ".cache-disk" // bases that did not fit in memory
)

// prepareCache sets up dir, the worker's cache, as mode (--cache-memory)
// asks and says whether it is in memory. auto never fails: when it
// cannot mount, one line on stderr says the cache stays on disk and how
// to have it in memory.
func prepareCache(dir, mode string, stderr io.Writer) (inMemory bool, err error) {
	switch mode {
	case cacheOff:
		return false, nil
	case cacheAuto, "":
		size, err := autoCacheSize(os.ReadFile)
		if err == nil {
			err = cacheInMemory(dir, strconv.FormatInt(size, 10))
		}
		if err != nil {
			fmt.Fprintf(stderr, "tiny-go worker: cached bases stay on disk, where a cold base of many files is made several times slower (%v); to keep them in memory run the worker with CAP_SYS_ADMIN or mount a tmpfs on %s yourself (--cache-memory off silences this)\n", err, dir)
			return false, nil
		}
		return true, nil
	}
	if err := cacheInMemory(dir, mode); err != nil {
		return false, fmt.Errorf("%w (it needs root or CAP_SYS_ADMIN; or mount one there yourself, or use --cache-memory off)", err)
	}
	return true, nil
}

// autoCacheSize is a quarter of the memory this process may use: the
// machine's (MemTotal) or, when lower, its memory cgroup's limit (v2
// memory.max, v1 memory.limit_in_bytes, the lowest of its cgroup and
// the cgroups above it), rounded down to whole pages.
func autoCacheSize(read func(string) ([]byte, error)) (int64, error) {
	b, err := read("/proc/meminfo")
	if err != nil {
		return 0, fmt.Errorf("read the machine's memory: %w", err)
	}
	limit, ok := parseMemTotal(b)
	if !ok {
		return 0, errors.New("/proc/meminfo has no MemTotal")
	}
	if b, err := read("/proc/self/cgroup"); err == nil {
		for _, f := range cgroupLimitFiles(b) {
			if b, err := read(f); err == nil {
				if n, ok := parseMemoryMax(b); ok && n < limit {
					limit = n
				}
			}
		}
	}
	page := int64(os.Getpagesize())
	size := limit / 4 / page * page
	if size < page {
		return 0, fmt.Errorf("the memory limit (%d bytes) leaves no room for a cache", limit)
	}
	return size, nil
}

// parseMemTotal is /proc/meminfo's MemTotal in bytes ("MemTotal: 123 kB").
func parseMemTotal(b []byte) (int64, bool) {
	for line := range bytes.Lines(b) {
		rest, ok := bytes.CutPrefix(line, []byte("MemTotal:"))
		if !ok {
			continue
		}
		f := strings.Fields(string(rest))
		if len(f) != 2 || f[1] != "kB" {
			return 0, false
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil || n <= 0 || n > 1<<53 {
			return 0, false
		}
		return n * 1024, true
	}
	return 0, false
}

// parseMemoryMax is a cgroup's memory limit in bytes: false for none
// ("max", or v1's near-2^63 for none) or for what is not a number.
func parseMemoryMax(b []byte) (int64, bool) {
	s := strings.TrimSpace(string(b))
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 || n >= 1<<62 {
		return 0, false
	}
	return n, true
}

// cgroupLimitFiles are the memory limit files of this process's cgroups
// (from /proc/self/cgroup) and of every cgroup above them, under
// /sys/fs/cgroup: a limit above binds as much as one's own. A path that
// would leave /sys/fs/cgroup (a cgroup outside this one's namespace,
// "/..") gives only the namespace's root.
func cgroupLimitFiles(procCgroup []byte) []string {
	var files []string
	for line := range bytes.Lines(procCgroup) {
		f := strings.SplitN(strings.TrimSpace(string(line)), ":", 3)
		if len(f) != 3 || !strings.HasPrefix(f[2], "/") {
			continue
		}
		var root, file string
		switch {
		case f[0] == "0" && f[1] == "":
			root, file = "/sys/fs/cgroup", "memory.max"
		case hasController(f[1], "memory"):
			root, file = "/sys/fs/cgroup/memory", "memory.limit_in_bytes"
		default:
			continue
		}
		p := f[2]
		if strings.Contains(p, "..") {
			p = "/"
		}
		for p = path.Clean(p); ; p = path.Dir(p) {
			files = append(files, filepath.Join(root, filepath.FromSlash(p), file))
			if p == "/" {
				break
			}
		}
	}
	return files
}

func hasController(list, name string) bool {
	for c := range strings.SplitSeq(list, ",") {
		if c == name {
			return true
		}
	}
	return false
}

// cacheInMemory mounts a tmpfs of at most size (tmpfs's size=, e.g. 4g)
// on dir, the worker's cache, unless one is there already (the cache
// outlives the worker that mounted it). Creating a cold base's files is
// nearly all of its time, and on a disk file system busy with others'
// creations and deletions it is several times slower (ext4 looks for
// recently deleted inodes at every creation when it has no journal); on
// a tmpfs it is not. Workers that start at once on one --work-dir take
// a lock, so they mount one tmpfs, not one over the other.
func cacheInMemory(dir, size string) error {
	if size == "" || strings.ContainsAny(size, ",") {
		return fmt.Errorf("%q is not a size", size)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	lock, err := os.OpenFile(filepath.Join(filepath.Dir(dir), "."+filepath.Base(dir)+".lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return err
	}
	defer lock.Close()
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX); err != nil {
		return err
	}
	if onTmpfs(dir) {
		return nil
	}
	if err := mountTmpfs(dir, size); err != nil {
		return fmt.Errorf("mount a tmpfs on %s: %w", dir, err)
	}
	return nil
}
