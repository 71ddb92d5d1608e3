// Package checkpoint records, before every effect of a tool call, what the
// effect may change, so that a later rewind can put the working directory's
// files back the way they were. Checkpoints live beside the session, never
// inside it: blobs and snapshots in <cwd>/.tiny-agent/checkpoints/ (shared by
// the sessions of the directory, deduplicated by content) and one index per
// session (checkpoints.jsonl in the session's sidecar directory), keyed by
// the durable toolStarted id of the call.
//
// In a git work tree a snapshot is a git tree object built with a private
// index in a private object directory that borrows the repository's objects
// as alternates, so the user's index, refs and stash are never touched.
// Elsewhere a snapshot is a manifest of the files with a content-addressed
// copy of each file that changed since the previous snapshot (found by size
// and modification time).
package checkpoint

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/tiny-agent/tiny-go/internal/atomicfile"
	"github.com/tiny-agent/tiny-go/internal/store"
)

// Names under the working directory.
const (
	stateDirName = ".tiny-agent"
	dirName      = "checkpoints"
	dirMode      = 0o700
	fileMode     = 0o600
)

// Defaults of Options.
const (
	DefaultCap         int64 = 2 << 30  // 2 GiB for the whole store
	DefaultMaxFileSize int64 = 64 << 20 // a bigger file is recorded as missing
	// DefaultMaxFiles bounds a plain snapshot: a bigger tree (a home
	// directory, say) is recorded as missing rather than copied. Tracked
	// checkpoints cost what changed, so only the one background copy of
	// the first snapshot grows with the tree (docs/performance.md §20).
	DefaultMaxFiles = 1000000
)

// Options configure a Store. The zero value means the defaults.
type Options struct {
	// Cap bounds the bytes of the store. When a new checkpoint pushes the
	// store over it, the oldest checkpoints of the directory are dropped
	// until it is under 90% of the cap (see Store.Evict).
	Cap int64
	// MaxFileSize bounds one file's copy; a bigger file is recorded as
	// missing ("larger than ...").
	MaxFileSize int64
	// DisableGit forces the plain snapshot mode even in a git work tree.
	DisableGit bool
	// MaxFiles bounds the files of a plain snapshot; a bigger working
	// directory (a home directory, say) is recorded as missing instead of
	// being copied.
	MaxFiles int
	// AfterApply, when set, is called by Apply after each action is done
	// (the path is in its target state), with the number done so far. A
	// test seam: tests pause a rewind there to kill it midway.
	AfterApply func(done int)
	// MaxWatches bounds the inotify watches of change tracking (see
	// Store.Track); 0 leaves only the kernel's limit. A test seam.
	MaxWatches int
	// TxLayers is a folder on a real file system for commands' overlay
	// layers when the working directory is itself an overlay (which
	// cannot be an upper layer): $TINY_OVERLAY_LAYERS.
	TxLayers string
	// Journal makes a bash call's transaction a journaled one
	// (BeginJournalTx): its command runs on the tree itself.
	Journal bool
}

func (o Options) withDefaults() Options {
	if o.Cap <= 0 {
		o.Cap = DefaultCap
	}
	if o.MaxFileSize <= 0 {
		o.MaxFileSize = DefaultMaxFileSize
	}
	if o.MaxFiles <= 0 {
		o.MaxFiles = DefaultMaxFiles
	}
	return o
}

// Store is the checkpoint store of one working directory. Its methods are
// safe for concurrent use; snapshots are serialized (within the process by
// a mutex, across processes by an advisory lock on the store).
type Store struct {
	cwd  string // absolute working directory
	root string // <cwd>/.tiny-agent/checkpoints
	opts Options

	mu       sync.Mutex
	git      *gitRepo // nil in plain mode
	last     *manifest
	lastHash string
	tooBig   string // why plain snapshots are off in this process
	gitSizer fanSizer

	manifests sync.Map // manifest hash -> *manifest, resolved

	sealedStates sync.Map // transaction id -> *txStates, checked (txsealed.go)

	trees sync.Map // tree ref -> Tree, parsed snapshots are immutable

	stored sync.Map // manifest hash -> *storedManifest, as stored (a delta)
	heads  sync.Map // manifest hash -> manifestHead
	// listCompares counts plans that compared two snapshots as whole
	// lists (a test seam: a tracked rewind must not).
	listCompares atomic.Int64

	// approx is the store's size as last measured plus what snapshots
	// added since (-1: not measured yet); crossing the cap triggers an
	// eviction.
	approx int64

	// journal: bash calls' transactions are journaled (Options.Journal,
	// SetJournal).
	journal atomic.Bool

	tr   *tracking // nil: every snapshot scans the tree
	gitw gitWatch  // the newest recorded git state (gitstate.go)
	// lazy: Track on the first tree snapshot (TrackLazily).
	lazy     bool
	lazyOnce sync.Once
	lazyWarn func(string)
	// protect makes .tiny-agent survive git clean, once, before the first
	// effect (protect.go), not at start-up.
	protect sync.Once
	warn    func(string)
	warned  atomic.Bool
}

// Open opens (creating it when needed) the checkpoint store of cwd. The
// directories are created 0700 one component at a time without following
// symlinks.
func Open(cwd string, opts Options) (*Store, error) {
	abs, err := filepath.Abs(cwd)
	if err != nil {
		return nil, fmt.Errorf("checkpoints: %w", err)
	}
	root, err := store.StateDir(abs, dirName, true)
	if err != nil {
		return nil, fmt.Errorf("checkpoints: %w", err)
	}
	s := &Store{cwd: abs, root: root, opts: opts.withDefaults(), approx: -1}
	s.journal.Store(opts.Journal)
	if !s.opts.DisableGit {
		g, err := detectGit(abs, root)
		if err != nil {
			return nil, fmt.Errorf("checkpoints: %w", err)
		}
		s.git = g
	}
	return s, nil
}

// Dir is the store's directory.
func (s *Store) Dir() string { return s.root }

// Cwd is the working directory the store snapshots.
func (s *Store) Cwd() string { return s.cwd }

// Mode names the snapshot mode: "git" or "plain".
func (s *Store) Mode() string {
	if s.git != nil {
		return "git"
	}
	return "plain"
}

// Cap is the store's size cap in bytes.
func (s *Store) Cap() int64 { return s.opts.Cap }

// ensureDirs makes base/names... with mode 0700, refusing symlinks on the
// way, and returns the path.
func ensureDirs(base string, names ...string) (string, error) {
	path := base
	for _, n := range names {
		path = filepath.Join(path, n)
		fi, err := os.Lstat(path)
		if errors.Is(err, fs.ErrNotExist) {
			if err := os.Mkdir(path, dirMode); err != nil && !errors.Is(err, fs.ErrExist) {
				return "", err
			}
			fi, err = os.Lstat(path)
		}
		if err != nil {
			return "", err
		}
		if !fi.IsDir() {
			return "", fmt.Errorf("%s is not a directory (symlinks are refused)", path)
		}
	}
	return path, nil
}

// lock takes the store's cross-process lock until the returned func runs.
func (s *Store) lock() (func(), error) {
	s.mu.Lock()
	f, err := os.OpenFile(filepath.Join(s.root, "lock"), os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW, fileMode)
	if err != nil {
		s.mu.Unlock()
		return nil, err
	}
	for {
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		s.mu.Unlock()
		return nil, err
	}
	return func() { f.Close(); s.mu.Unlock() }, nil
}

// Hashes name content in one of two schemes: "sha256:<hex>" of the raw
// bytes (the store's own blobs), or "git:<oid>" (a blob of the git object
// store, hashed the git way).
const (
	schemeSHA = "sha256:"
	schemeGit = "git:"
)

func sha256Hash(data []byte) string {
	sum := sha256.Sum256(data)
	return schemeSHA + hex.EncodeToString(sum[:])
}

// blobPath is where a sha256 blob lives: objects/ab/cdef...
func (s *Store) blobPath(h string) (string, error) {
	hexs, ok := strings.CutPrefix(h, schemeSHA)
	if !ok || len(hexs) != 64 {
		return "", fmt.Errorf("not a blob hash: %q", h)
	}
	return filepath.Join(s.root, "objects", hexs[:2], hexs[2:]), nil
}

// putBlob stores data under its sha256 (a no-op when present) and returns
// the hash and the bytes added to the store.
func (s *Store) putBlob(data []byte) (string, int64, error) {
	h := sha256Hash(data)
	p, _ := s.blobPath(h)
	if _, err := os.Lstat(p); err == nil {
		return h, 0, nil
	}
	if _, err := ensureDirs(s.root, "objects", filepath.Base(filepath.Dir(p))); err != nil {
		return "", 0, err
	}
	if err := writeAtomic(p, data, fileMode, false); err != nil {
		return "", 0, err
	}
	return h, int64(len(data)), nil
}

// readBlob returns the bytes of a hash of any scheme.
func (s *Store) readBlob(h string) ([]byte, error) {
	if strings.HasPrefix(h, schemeTx) {
		return s.readTxBlob(h)
	}
	if oid, ok := strings.CutPrefix(h, schemeGit); ok {
		if s.git == nil {
			return nil, fmt.Errorf("blob %s needs a git work tree", h)
		}
		return s.git.catBlob(oid)
	}
	p, err := s.blobPath(h)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("checkpoint blob %s: %w", h[:min(len(h), 19)], err)
	}
	if sha256Hash(data) != h {
		return nil, fmt.Errorf("checkpoint blob %s is damaged", h[:19])
	}
	return data, nil
}

// hashLike hashes data in the scheme of ref, so content on disk can be
// compared with a recorded hash.
func (s *Store) hashLike(ref string, data []byte) string {
	if strings.HasPrefix(ref, schemeGit) && s.git != nil {
		return schemeGit + s.git.blobOID(data)
	}
	return sha256Hash(data)
}

// writeAtomic writes data to path through a temporary file in the same
// directory and a rename (atomicfile), so path holds either its old or
// its new content. With sync the write is durable when it returns.
func writeAtomic(path string, data []byte, mode fs.FileMode, sync bool) error {
	return atomicfile.Write(path, data, atomicfile.Options{Perm: mode, Sync: sync})
}

// readCapped reads a regular file of at most limit bytes. The open never
// blocks (a FIFO put where a file stood would wait for a writer forever)
// and anything but a regular file is refused unread.
func readCapped(path string, limit int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil {
		return nil, err
	} else if !fi.Mode().IsRegular() {
		return nil, errNotRegular
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, errTooLarge
	}
	return data, nil
}

var (
	errTooLarge   = errors.New("too large")
	errNotRegular = errors.New("not a regular file")
)

// accountLocked adds a record's bytes to the size estimate. The caller
// holds the store lock.
func (s *Store) accountLocked(added int64) {
	if s.approx < 0 {
		s.approx = s.size()
	} else {
		s.approx += added
	}
}

// maybeEvict drops the oldest checkpoints when the store passed its cap.
// It runs after a record is in its index, so the newest snapshot is
// always among the live ones.
func (s *Store) maybeEvict(ctx context.Context) {
	unlock, err := s.lock()
	if err != nil {
		return
	}
	defer unlock()
	if s.approx > s.opts.Cap {
		_ = s.evictLocked(context.WithoutCancel(ctx))
		s.approx = s.size()
	}
}

// hasBlob reports whether the content of h can still be read.
func (s *Store) hasBlob(h string) bool {
	if strings.HasPrefix(h, schemeTx) {
		p, err := s.txBlobPath(h)
		if err != nil {
			return false
		}
		_, err = os.Lstat(p)
		return err == nil
	}
	if oid, ok := strings.CutPrefix(h, schemeGit); ok {
		if s.git == nil {
			return false
		}
		_, ok, err := s.git.cat(oid)
		return err == nil && ok
	}
	p, err := s.blobPath(h)
	if err != nil {
		return false
	}
	_, err = os.Lstat(p)
	return err == nil
}

// Close ends the helper process a git store may have started.
func (s *Store) Close() error {
	s.lazyOnce.Do(func() {}) // no tracking starts after Close
	if s.tr != nil {
		s.tr.stop() // a baseline still being taken is not needed
		<-s.tr.ready
		s.mu.Lock()
		if s.tr.t != nil {
			s.tr.t.Close()
			s.tr.t = nil
		}
		s.mu.Unlock()
	}
	if s.git != nil {
		s.git.close()
	}
	return nil
}
