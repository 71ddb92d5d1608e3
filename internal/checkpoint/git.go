package checkpoint

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tiny-agent/tiny-go/internal/gitcmd"
)

// gitRepo snapshots a git work tree through a private index and a private
// object directory; the repository's own objects are borrowed read-only as
// alternates.
type gitRepo struct {
	cwd     string // the working directory (inside the work tree)
	prefix  string // cwd relative to the top of the work tree, "" or "sub/dir/"
	format  string // object format: sha1 or sha256
	env     []string
	index   string
	objects string // the private object directory
	seeded  bool   // the private index exists (seeded from HEAD)
	// stateIgnored: .tiny-agent is ignored by the user's rules.
	stateIgnored bool

	batchMu sync.Mutex
	batch   *catBatch // a running git cat-file --batch, started on first use
}

// catBatch is one git cat-file --batch process: reading many blobs costs
// one process, not one each.
type catBatch struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

// detectGit returns the git mode of cwd, or nil when cwd is not inside a
// git work tree (or git is not installed). Snapshots run git on a private
// git directory (root/git, gitcmd.Isolate): the repository's config and
// attributes cannot make it start a program.
func detectGit(cwd, root string) (*gitRepo, error) {
	if _, err := exec.LookPath("git"); err != nil {
		return nil, nil
	}
	out, err := gitcmd.Repo(context.Background(), cwd, nil, "rev-parse", "--is-inside-work-tree", "--show-prefix",
		"--git-path", "objects", "--show-object-format", "--show-toplevel", "--git-path", "info/exclude").Output()
	if err != nil {
		return nil, nil // not a work tree
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) != 6 || lines[0] != "true" {
		return nil, nil
	}
	abs := func(p string) string {
		if !filepath.IsAbs(p) {
			return filepath.Join(cwd, p)
		}
		return p
	}
	g := &gitRepo{cwd: cwd, prefix: lines[1], format: lines[3]}
	gitDir, err := ensureDirs(root, "git")
	if err != nil {
		return nil, err
	}
	own, err := ensureDirs(gitDir, "objects")
	if err != nil {
		return nil, err
	}
	for _, d := range []string{"info", "pack"} {
		if _, err := ensureDirs(own, d); err != nil {
			return nil, err
		}
	}
	g.index = filepath.Join(gitDir, "index")
	g.objects = own
	_, statErr := os.Lstat(g.index)
	g.seeded = statErr == nil
	private, err := gitcmd.Isolate(gitcmd.Isolated{
		Dir: gitDir, WorkTree: lines[4], Index: g.index, Objects: own, Alternates: abs(lines[2]),
		Exclude: abs(lines[5]), Format: g.format, Attributes: gitcmd.Raw,
	})
	if err != nil {
		return nil, err
	}
	g.env = gitcmd.Env(os.Environ(), private...)
	return g, nil
}

// command is a git command on the private index and object store.
func (g *gitRepo) command(ctx context.Context, args ...string) *exec.Cmd {
	return gitcmd.Command(ctx, g.cwd, append([]string{}, g.env...), args...)
}

func (g *gitRepo) run(ctx context.Context, stdin []byte, args ...string) ([]byte, []byte, error) {
	cmd := g.command(ctx, args...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if i := strings.LastIndexByte(msg, '\n'); i >= 0 {
			msg = msg[i+1:]
		}
		return stdout.Bytes(), stderr.Bytes(), fmt.Errorf("git %s: %w: %s", args[0], err, msg)
	}
	return stdout.Bytes(), stderr.Bytes(), nil
}

// snapshot writes a tree of the working directory's tracked and
// untracked-not-ignored files (the store's own directory excluded) and
// returns its oid and the files git could not read.
func (g *gitRepo) snapshot(ctx context.Context, maxObject int64) (string, []File, error) {
	began := time.Now()
	// A git killed mid-write (an Esc cancels the snapshot) leaves its
	// lock file; the store's own lock is held, so no git of ours is running.
	os.Remove(g.index + ".lock")
	if !g.seeded {
		// Tracked files that match an ignore rule are still part of the
		// tree: start from the user's index (whose stat data spares
		// hashing every unchanged file, seedIndex) or HEAD's entries. A
		// repository without a commit starts empty.
		if !g.seedIndex(ctx) {
			if !g.readHead(ctx) {
				os.Remove(g.index)
			}
		}
		g.seeded = true
	}
	// The store's own directory is left out by a pathspec, unless an
	// ignore rule already leaves it out (git then refuses the pathspec).
	add := []string{"add", "-A", "--ignore-errors", "--", "."}
	if !g.stateIgnored {
		add = append(add, ":(exclude)"+stateDirName)
	}
	_, stderr, err := g.run(ctx, nil, add...)
	if err != nil && !g.stateIgnored && bytes.Contains(stderr, []byte("ignored by one of your .gitignore files")) {
		g.stateIgnored = true
		_, stderr, err = g.run(ctx, nil, add[:len(add)-1]...)
	}
	var unreadable []File
	for _, line := range strings.Split(string(stderr), "\n") {
		if p, ok := strings.CutPrefix(line, "error: unable to index file '"); ok {
			p = strings.TrimSuffix(p, "'")
			unreadable = append(unreadable, File{Path: strings.TrimPrefix(p, g.prefix), Missing: "unreadable"})
		}
	}
	if err != nil && len(unreadable) == 0 {
		return "", nil, err
	}
	// A huge file (a data set nobody ignored) is not kept: its object is
	// removed again and the file recorded as missing; the tree still
	// names it.
	args := []string{"write-tree"}
	if big := g.dropBig(began, maxObject); len(big) > 0 {
		args = append(args, "--missing-ok")
		out, _, err := g.run(ctx, nil, "ls-files", "-s", "-z")
		if err == nil {
			for _, rec := range bytes.Split(out, []byte{0}) {
				meta, path, ok := bytes.Cut(rec, []byte{'\t'})
				if f := strings.Fields(string(meta)); ok && len(f) >= 2 && big[f[1]] && strings.HasPrefix(string(path), g.prefix) {
					unreadable = append(unreadable, File{Path: strings.TrimPrefix(string(path), g.prefix), Missing: "larger than " + formatBytes(maxObject) + " compressed"})
				}
			}
		}
	}
	if g.prefix != "" {
		args = append(args, "--prefix="+g.prefix)
	}
	out, _, err := g.run(ctx, nil, args...)
	if err != nil {
		// An empty directory has no subtree in the index.
		out, _, err = g.run(ctx, []byte{}, "mktree")
		if err != nil {
			return "", nil, err
		}
	}
	return strings.TrimSpace(string(out)), unreadable, nil
}

// dropBig removes the loose objects written since began that are larger
// than limit, and returns their ids.
func (g *gitRepo) dropBig(began time.Time, limit int64) map[string]bool {
	dir := g.objects
	fans, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var big map[string]bool
	for _, fan := range fans {
		fi, err := fan.Info()
		if err != nil || len(fan.Name()) != 2 || !fi.IsDir() || fi.ModTime().Before(began.Add(-time.Second)) {
			continue
		}
		objs, err := os.ReadDir(filepath.Join(dir, fan.Name()))
		if err != nil {
			continue
		}
		for _, o := range objs {
			oi, err := o.Info()
			if err != nil || !oi.Mode().IsRegular() || oi.Size() <= limit {
				continue
			}
			if os.Remove(filepath.Join(dir, fan.Name(), o.Name())) == nil {
				if big == nil {
					big = map[string]bool{}
				}
				big[fan.Name()+o.Name()] = true
			}
		}
	}
	return big
}

// files lists the blobs of a tree, with paths relative to the tree.
func (g *gitRepo) files(oid string) (map[string]File, error) {
	out, _, err := g.run(context.Background(), nil, "ls-tree", "-r", "-z", "--full-tree", oid)
	if err != nil {
		return nil, err
	}
	return parseLsTree(out), nil
}

// parseLsTree reads the output of git ls-tree -r -z.
func parseLsTree(out []byte) map[string]File {
	files := make(map[string]File)
	for _, rec := range bytes.Split(out, []byte{0}) {
		if len(rec) == 0 {
			continue
		}
		meta, path, ok := bytes.Cut(rec, []byte{'\t'})
		fields := strings.Fields(string(meta))
		if !ok || len(fields) != 3 || fields[1] != "blob" {
			continue // submodules (commit entries) are not restored
		}
		f := File{Path: string(path), Hash: schemeGit + fields[2], Mode: 0o644}
		switch fields[0] {
		case "100755":
			f.Mode = 0o755
		case "120000":
			f.Link = true
			f.Mode = 0o777
		}
		files[f.Path] = f
	}
	return files
}

// catBlob reads one blob from the private store or the repository's.
func (g *gitRepo) catBlob(oid string) ([]byte, error) {
	data, ok, err := g.cat(oid)
	if err == nil && !ok {
		err = fmt.Errorf("git object %s is missing", oid)
	}
	return data, err
}

// cat asks the batch process for one object; ok is false when it is
// missing.
func (g *gitRepo) cat(oid string) (data []byte, ok bool, err error) {
	g.batchMu.Lock()
	defer g.batchMu.Unlock()
	if g.batch == nil {
		cmd := g.command(context.Background(), "cat-file", "--batch")
		in, err := cmd.StdinPipe()
		if err != nil {
			return nil, false, err
		}
		out, err := cmd.StdoutPipe()
		if err != nil {
			return nil, false, err
		}
		if err := cmd.Start(); err != nil {
			return nil, false, fmt.Errorf("git cat-file: %w", err)
		}
		g.batch = &catBatch{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 64<<10)}
	}
	b := g.batch
	fail := func(err error) ([]byte, bool, error) {
		g.closeBatchLocked()
		return nil, false, fmt.Errorf("git cat-file: %w", err)
	}
	if _, err := io.WriteString(b.in, oid+"\n"); err != nil {
		return fail(err)
	}
	head, err := b.out.ReadString('\n')
	if err != nil {
		return fail(err)
	}
	fields := strings.Fields(head)
	if len(fields) == 2 && fields[1] == "missing" {
		return nil, false, nil
	}
	if len(fields) != 3 {
		return fail(fmt.Errorf("unexpected reply %q", head))
	}
	size, err := strconv.Atoi(fields[2])
	if err != nil {
		return fail(err)
	}
	data = make([]byte, size+1)
	if _, err := io.ReadFull(b.out, data); err != nil {
		return fail(err)
	}
	return data[:size], true, nil
}

func (g *gitRepo) closeBatchLocked() {
	if g.batch != nil {
		g.batch.in.Close()
		_ = g.batch.cmd.Wait()
		g.batch = nil
	}
}

func (g *gitRepo) close() {
	g.batchMu.Lock()
	defer g.batchMu.Unlock()
	g.closeBatchLocked()
}

// blobOID hashes data the way git names a blob of this repository's
// object format, without running git.
func (g *gitRepo) blobOID(data []byte) string {
	var h hash.Hash
	if g.format == "sha256" {
		h = sha256.New()
	} else {
		h = sha1.New()
	}
	h.Write([]byte("blob " + strconv.Itoa(len(data)) + "\x00"))
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}

// objectsSize is the size of the private object directory.
func dirSize(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// fanSizer measures a loose-object directory (objects/xx/...) again
// cheaply: only the fan-out directories whose mtime changed since the last
// measure are walked, so the cost before every command does not grow with
// the store.
type fanSizer struct {
	fans map[string]fanSize
}

type fanSize struct {
	mtime int64
	bytes int64
}

func (f *fanSizer) size(dir string) int64 {
	if f.fans == nil {
		f.fans = map[string]fanSize{}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	var total int64
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			continue
		}
		mt := fi.ModTime().UnixNano()
		if prev, ok := f.fans[e.Name()]; ok && prev.mtime == mt {
			total += prev.bytes
			continue
		}
		n := dirSize(filepath.Join(dir, e.Name()))
		f.fans[e.Name()] = fanSize{mtime: mt, bytes: n}
		total += n
	}
	return total
}
