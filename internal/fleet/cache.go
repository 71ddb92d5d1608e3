package fleet

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/tiny-agent/tiny-go/internal/checkpoint"
)

// A worker keeps every base it laid out (an eval task's folder with its
// fixture made a git repository, a workspace tarball, a git commit) in
// --work-dir/.cache/bases/<hash of the source>/, built once and never
// changed after, and lays out a task's workspace from it:
//
//   - as an overlay (lower: the cached base, upper: the task's own
//     folder) where the worker may mount one (root, or CAP_SYS_ADMIN):
//     no file is copied, a file is copied up on its first write, and
//     the cache is never written;
//   - else by `cp -a --reflink=auto`: a clone of each file where the
//     file system has them (XFS, Btrfs), a copy elsewhere.
//
// Hard links are not used: a command that writes a file in place (`>>`,
// an editor without rename) would change the cached base and every
// workspace made from it.

// baseCache is the folder of a worker's cached bases.
type baseCache struct {
	dir string
	// disk, when dir is in memory, is where a base that does not fit
	// there is built (and found) instead: a full memory cache never
	// fails a task. full is called when that happens.
	disk string
	full func()
}

// entry is the cached base of key, built by build (into a folder of its
// own that becomes the entry by a rename, so a half-built base is never
// used and two tasks building one at once both end with one). need is
// what the base takes at least, in bytes (0: unknown), asked only when
// the base is not there yet (nil: unknown).
func (c baseCache) entry(ctx context.Context, key string, need func() int64, build func(dir string) error) (string, error) {
	name := sha([]byte(key))
	for _, d := range []string{c.dir, c.disk} {
		if _, err := os.Stat(filepath.Join(d, name, ".done")); d != "" && err == nil {
			return filepath.Join(d, name), nil
		}
	}
	if c.disk == "" {
		return buildEntry(ctx, c.dir, name, build)
	}
	n := int64(0)
	if need != nil {
		n = need()
	}
	if hasRoom(c.dir, n) {
		dir, err := buildEntry(ctx, c.dir, name, build)
		if !errors.Is(err, errNoSpace) {
			return dir, err
		}
	}
	if c.full != nil {
		c.full()
	}
	return buildEntry(ctx, c.disk, name, build)
}

// errNoSpace marks a base that failed to build because its cache's
// file system was full.
var errNoSpace = errors.New("the cache is full")

// buildEntry builds the entry name in dir (see entry).
func buildEntry(ctx context.Context, dir, name string, build func(dir string) error) (string, error) {
	entry := filepath.Join(dir, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", markNoSpace(err, dir)
	}
	tmp, err := os.MkdirTemp(dir, ".build-*")
	if err != nil {
		return "", markNoSpace(err, dir)
	}
	defer os.RemoveAll(tmp)
	if err := build(tmp); err != nil {
		return "", markNoSpace(err, dir)
	}
	if err := os.WriteFile(filepath.Join(tmp, ".done"), nil, 0o644); err != nil {
		return "", markNoSpace(err, dir)
	}
	if err := os.Rename(tmp, entry); err != nil {
		if _, serr := os.Stat(filepath.Join(entry, ".done")); serr == nil {
			return entry, nil // built by another task meanwhile
		}
		return "", err
	}
	return entry, ctx.Err()
}

// markNoSpace marks err with errNoSpace when dir's file system is full:
// ENOSPC, or a child's message of it (git, cp), or (before the
// half-built base is removed) less room left than a file's worth.
func markNoSpace(err error, dir string) error {
	if errors.Is(err, unix.ENOSPC) || strings.Contains(err.Error(), "No space left on device") || !hasRoom(dir, 0) {
		return fmt.Errorf("%w: %w", errNoSpace, err)
	}
	return err
}

// hasRoom says whether dir's file system has need bytes free, and more
// than a small file's worth of space and inodes.
func hasRoom(dir string, need int64) bool {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return true // no better knowledge: try
	}
	free := int64(st.Bavail) * int64(st.Bsize)
	return free > max(need, 16<<10) && (st.Files == 0 || st.Ffree > 16)
}

// layOut makes repo the cached base, by an overlay or a copy (see above);
// root is the task's folder, which holds the overlay's own folders. upper
// is the overlay's upper layer ("" for a copy).
func layOut(ctx context.Context, base, root, repo string) (upper string, err error) {
	upper = filepath.Join(root, ".upper")
	for _, d := range []string{repo, upper, filepath.Join(root, ".ovl")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return "", err
		}
	}
	// redirect_dir=on: tiny-go's transactions move folders of the base
	// aside by renames (off, the kernel refuses them with EXDEV); the
	// change set ships a moved folder whole (walkUpper).
	opts := fmt.Sprintf("lowerdir=%s,upperdir=%s,workdir=%s,redirect_dir=on,metacopy=off,index=off",
		base, upper, filepath.Join(root, ".ovl"))
	if !strings.ContainsAny(base+root, ",:") && mountOverlay(repo, opts) == nil {
		return upper, nil
	}
	_ = os.Remove(repo)
	out, err := exec.CommandContext(ctx, "cp", "-a", "--reflink=auto", base, repo).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("copy the base %s: %v: %s", base, err, strings.TrimSpace(string(out)))
	}
	return "", nil
}

// txLayers is the folder, in a task's folder on the worker's own file
// system, of the upper and work directories of tiny-go's per-command
// overlays: a workspace laid out as an overlay cannot hold them
// (overlayfs refuses to be an upper layer), so without it every command
// of the agent would fall back to watching the tree, a whole-tree
// checkpoint per process (docs/checkpoints.md).
const txLayers = ".tx"

// unmount takes an overlay off repo, if one is there; a task's folder is
// removed only after (removing through it would only fill its upper).
func unmount(repo string) {
	for unmountDetach(repo) == nil {
	}
}

// seedCheckpoints takes tiny-go's first checkpoint of a base once, as a
// session that ran there before would have: its private git index then
// comes with every workspace laid out from the base, and the agent's first
// checkpoint of a task only checks the stat of the files (a whole `git add
// -A` of a 20,000-file tree took seconds on a busy machine). On a copy of
// the base (no overlay) the stat differs and it re-reads them, as before.
//
// The repository's own index, just written by `git add -A`, seeds it: the
// files' stat then matches, and git hashes none of them again.
func seedCheckpoints(ctx context.Context, repo string) error {
	if idx, err := os.ReadFile(filepath.Join(repo, ".git", "index")); err == nil {
		dst := filepath.Join(repo, filepath.FromSlash(checkpointIndex))
		if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
			return err
		}
		if err := os.WriteFile(dst, idx, 0o600); err != nil {
			return err
		}
	}
	cs, err := checkpoint.Open(repo, checkpoint.Options{})
	if err != nil {
		return err
	}
	defer cs.Close()
	cs.Snapshot(ctx)
	return ctx.Err()
}

// checkpointIndex is tiny-go's private git index of its checkpoints: a
// cache of the files' stat and hashes that git rebuilds when it is
// missing or old, 1.6 MB at 20,000 files and rewritten by every
// checkpoint. It is not shipped in change sets.
const checkpointIndex = ".tiny-agent/checkpoints/git/index"

// skipShipped leaves out of change sets what travels otherwise (the
// session, as its cut prefix) or is a cache (checkpointIndex).
func skipShipped(rel string) bool {
	return skipSession(rel) || rel == checkpointIndex || rel == checkpointIndex+".lock"
}
