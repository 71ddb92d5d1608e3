package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"golang.org/x/sys/unix"

	"github.com/tiny-agent/tiny-go/internal/session"
)

// Store is the one writer of a session file (session.md §6). It holds the
// file's exclusive advisory lock from Create/Open until Close, keeps the
// reduced state in memory, and appends each committed transaction as one
// LF-terminated line without ever re-reading the file.
//
// All methods are safe for concurrent use. Commits are serialized in the
// order they arrive.
type Store struct {
	id    string
	path  string
	clock func() time.Time
	newID func() (string, error)
	fsync bool

	dirSynced func() // Options.dirSynced

	file *os.File
	dir  *os.File // the directory holding file, for fsync
	sink sink     // file, or a test wrapper around it

	// queue serializes Commit and Close, first come first served. Only
	// its holder changes the fields below; reducer and size change
	// under mu, which State takes to read them.
	queue fifo

	mu      sync.RWMutex
	reducer *session.Reducer
	size    int64 // committed length: every byte is a complete line
	nextSeq int64
	closed  bool
	broken  error // set when a failed append could not be undone

	// ledger is the running digest of the committed bytes and the file's
	// stamp after the last commit (integrity.go); only the queue holder
	// uses it.
	ledger *ledger
}

// IntegrityWarning is one line about the integrity records found when
// the session was opened (unsealed ones not trusted), or "".
func (s *Store) IntegrityWarning() string {
	if s.ledger == nil {
		return ""
	}
	return s.ledger.warning
}

// sink is the part of the session file that the append path uses. Tests
// substitute it to fail or cut writes.
type sink interface {
	WriteAt(p []byte, off int64) (int, error)
	Truncate(size int64) error
	Sync() error
}

// Options configure a Store. The zero value is valid: wall clock, UUIDv7
// ids, process-crash durability.
type Options struct {
	// Clock gives the time of the header's createdAt, the file name stamp
	// and fact timestamps. Nil means time.Now.
	Clock func() time.Time
	// NewID returns a fresh fact or session id (a UUIDv7). Nil means
	// NewID, whose ids sort in creation order within the process.
	NewID func() (string, error)
	// Fsync makes every commit power-loss durable: the file is synced
	// after each commit and the directory after create and repair.
	// Without it a line is handed to the OS before Commit returns,
	// which survives a process crash.
	Fsync bool

	// wrapSink, when set, wraps the file for the append path (tests).
	wrapSink func(sink) sink
	// dirSynced, when set, is called after each directory sync (tests).
	dirSynced func()
}

// NewID returns a new UUIDv7. google/uuid makes successive v7 ids
// strictly increasing within a process (its 12-bit sub-millisecond
// sequence never repeats or goes back), so ids sort in creation order.
func NewID() (string, error) {
	u, err := uuid.NewV7()
	if err != nil {
		return "", fmt.Errorf("new id: %w", err)
	}
	return u.String(), nil
}

func (o Options) withDefaults() Options {
	if o.Clock == nil {
		o.Clock = time.Now
	}
	if o.NewID == nil {
		o.NewID = NewID
	}
	return o
}

// NewHeader is what the caller decides about a new session; the store
// supplies the id, createdAt and the absolute cwd.
type NewHeader struct {
	Provider            string
	Model               string
	EnvironmentIdentity string // see EnvironmentIdentity
}

// EnvironmentIdentity returns the environment identity of cwd (session.md
// §2): TINY_AGENT_ENVIRONMENT_IDENTITY, trimmed, when non-empty, otherwise
// the symlink-resolved absolute cwd.
func EnvironmentIdentity(cwd string, getenv func(string) string) (string, error) {
	if v := strings.TrimSpace(getenv("TINY_AGENT_ENVIRONMENT_IDENTITY")); v != "" {
		return v, nil
	}
	abs, err := filepath.Abs(cwd)
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(abs)
}

// Create starts a new session in cwd: it creates
// <cwd>/.tiny-agent/sessions (mode 0700) if needed and the file
// <UTC stamp>_<id>.jsonl (mode 0600, O_CREAT|O_EXCL, no symlinks), locks
// it and writes the header line.
func Create(cwd string, nh NewHeader, opts Options) (*Store, error) {
	opts = opts.withDefaults()
	if nh.Provider == "" || nh.Model == "" || nh.EnvironmentIdentity == "" {
		return nil, errors.New("create session: provider, model and environment identity must be non-empty")
	}
	abs, err := filepath.Abs(cwd)
	if err != nil {
		return nil, fmt.Errorf("create session: %w", err)
	}
	id, err := opts.NewID()
	if err != nil {
		return nil, fmt.Errorf("create session: %w", err)
	}
	now := opts.Clock()
	h := session.Header{
		ID:                  id,
		CreatedAt:           now.UnixMilli(),
		Cwd:                 abs,
		Provider:            nh.Provider,
		Model:               nh.Model,
		EnvironmentIdentity: nh.EnvironmentIdentity,
	}
	line := session.EncodeHeader(h)
	if _, c := session.DecodeHeader(line[:len(line)-1]); c != nil {
		return nil, fmt.Errorf("create session: invalid header: %w", c)
	}

	dir, created, err := openSessionsDir(abs, true)
	if err != nil {
		return nil, fmt.Errorf("create session: %w", err)
	}
	defer dir.Close()
	if created && opts.Fsync {
		// New directories are durable only once their parents are synced.
		for _, parent := range []string{abs, filepath.Join(abs, stateDirName)} {
			if err := syncDirPath(parent); err != nil {
				return nil, fmt.Errorf("create session: %w", err)
			}
		}
	}
	f, err := openAt(dir, FileName(now, id), unix.O_RDWR|unix.O_CREAT|unix.O_EXCL)
	if err != nil {
		return nil, fmt.Errorf("create session: %w", err)
	}
	s, err := newStore(id, f, dir, opts)
	if err != nil {
		f.Close()
		return nil, err
	}
	fail := func(err error) (*Store, error) {
		s.closeFiles()
		os.Remove(s.path)
		return nil, err
	}
	if err := lockFile(f, id); err != nil {
		return fail(err)
	}
	if err := s.write(line, 0); err != nil {
		return fail(fmt.Errorf("create session %s: %w", id, err))
	}
	if opts.Fsync {
		if err := s.syncDir(); err != nil {
			return fail(fmt.Errorf("create session %s: %w", id, err))
		}
	}
	s.reducer = session.NewReducer(h)
	s.size = int64(len(line))
	s.nextSeq = 1
	s.ledger = newLedger(line)
	if err := s.restamp(); err != nil {
		return fail(fmt.Errorf("create session %s: %w", id, err))
	}
	return s, nil
}

// Open opens session id of cwd for writing. Only a regular file directly
// under the canonical sessions directory is accepted (no symlinks on the
// way, O_NOFOLLOW), and its header id must match the name. See OpenFile
// for what opening does.
func Open(cwd, id string, opts Options) (*Store, error) {
	if !ValidID(id) {
		return nil, fmt.Errorf("open session: %q is not a session id", id)
	}
	abs, err := filepath.Abs(cwd)
	if err != nil {
		return nil, fmt.Errorf("open session %s: %w", id, err)
	}
	dir, _, err := openSessionsDir(abs, false)
	if err != nil {
		return nil, fmt.Errorf("open session %s: %w", id, err)
	}
	defer dir.Close()
	name, err := findByID(dir, id)
	if err != nil {
		return nil, err
	}
	f, err := openAt(dir, name, unix.O_RDWR)
	if err != nil {
		return nil, fmt.Errorf("open session %s: %w", id, err)
	}
	return open(f, dir, id, opts)
}

// OpenFile opens the session file at path for writing; a symlink as the
// last path component is refused. If the file name is canonical, the
// header id must match it.
//
// Opening takes the exclusive lock (another process gets an error naming
// the session), reads and reduces the committed lines, and refuses a
// corrupt session with an error naming the code and line. Only then is the
// torn tail (every byte after the final LF) cut off, so that the next
// commit starts on a fresh line; a corrupt file is never modified.
func OpenFile(path string, opts Options) (*Store, error) {
	f, err := openNoFollow(path)
	if err != nil {
		return nil, fmt.Errorf("open session: %w", err)
	}
	dir, err := os.Open(filepath.Dir(path))
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("open session: %w", err)
	}
	defer dir.Close()
	_, id, _ := parseFileName(filepath.Base(path))
	return open(f, dir, id, opts)
}

func newStore(id string, f, dir *os.File, opts Options) (*Store, error) {
	// Keep a descriptor of the directory of our own: the caller closes
	// dir, and fsync of the directory is needed after create and repair.
	fd, err := unix.Dup(int(dir.Fd()))
	if err != nil {
		return nil, fmt.Errorf("session %s: %w", id, err)
	}
	unix.CloseOnExec(fd)
	s := &Store{
		id:        id,
		path:      f.Name(),
		clock:     opts.Clock,
		newID:     opts.NewID,
		fsync:     opts.Fsync,
		file:      f,
		dirSynced: opts.dirSynced,
		dir:       os.NewFile(uintptr(fd), dir.Name()),
		sink:      f,
	}
	if opts.wrapSink != nil {
		s.sink = opts.wrapSink(f)
	}
	return s, nil
}

// syncDir makes the directory entry of the file durable.
func (s *Store) syncDir() error {
	if err := s.dir.Sync(); err != nil {
		return fmt.Errorf("sync directory: %w", err)
	}
	if s.dirSynced != nil {
		s.dirSynced()
	}
	return nil
}

// closeFiles releases the lock and both descriptors.
func (s *Store) closeFiles() error {
	err := s.file.Close()
	if derr := s.dir.Close(); err == nil {
		err = derr
	}
	return err
}

// ID returns the session id.
func (s *Store) ID() string { return s.id }

// Path returns the session file's path.
func (s *Store) Path() string { return s.path }

// State returns a snapshot of the reduced state after the last commit. The
// snapshot is never modified by later commits.
func (s *Store) State() *session.State {
	s.mu.RLock()
	defer s.mu.RUnlock()
	st := s.reducer.State()
	st.RepairedLength = s.size
	return st
}

// Commit appends facts as one transaction. It assigns each fact its seq,
// the clock's timestamp and, when ID is empty, a new id; validates the
// whole candidate against the current state; appends one LF-terminated
// line; and only then applies it in memory. It returns the facts as
// committed.
//
// A rejected candidate (a *RejectedError) changes nothing: not the file,
// not the next seq, not the state. A failed or short write is undone by
// truncating the file to the last committed length before the error is
// returned. ctx bounds only the wait for earlier commits; once the append
// starts it completes.
func (s *Store) Commit(ctx context.Context, facts []session.Fact) ([]session.Fact, error) {
	if len(facts) == 0 {
		return nil, &RejectedError{ID: s.id, Corruption: &session.Corruption{Code: session.CorruptEmptyTransaction, Detail: "empty transaction"}}
	}
	if err := s.queue.acquire(ctx); err != nil {
		return nil, err
	}
	defer s.queue.release()

	if err := s.writable(); err != nil {
		return nil, err
	}
	tx, err := s.numbered(facts)
	if err != nil {
		return nil, err
	}
	// Check applies and rolls back internally, so it excludes State
	// readers like Apply does.
	s.mu.Lock()
	c := s.reducer.Check(tx)
	s.mu.Unlock()
	if c != nil {
		return nil, &RejectedError{ID: s.id, Corruption: c}
	}
	line, err := session.EncodeTransaction(tx)
	if err != nil {
		return nil, fmt.Errorf("session %s: %w", s.id, err)
	}
	if err := s.checkFile(); err != nil {
		// Another program changed the file: whatever is appended now
		// would land in a file that is not the session this store
		// reduced. Stop for good, and leave a mark so that the next
		// open does not adopt what was written.
		s.broken = err
		var te *TamperedError
		if errors.As(err, &te) {
			s.markTampered(te)
		}
		return nil, err
	}
	if err := s.write(line, s.size); err != nil {
		return nil, fmt.Errorf("session %s: append: %w", s.id, err)
	}
	s.mu.Lock()
	c = s.reducer.Apply(tx)
	if c == nil {
		s.size += int64(len(line))
		s.nextSeq += int64(len(tx))
	}
	s.mu.Unlock()
	if c != nil {
		// Check accepted what Apply refuses: a reducer bug. Keep file
		// and memory in step by taking the line back.
		if err := s.sink.Truncate(s.size); err != nil {
			s.broken = err
		}
		return nil, fmt.Errorf("session %s: apply after append: %w", s.id, c)
	}
	s.ledger.hash.Write(line)
	// The line is committed whatever happens to its record: a record that
	// could not be written is only a line the next open adopts unverified.
	_ = s.ledger.append(s.path, s.size)
	if err := s.restamp(); err != nil {
		s.broken = err
	}
	return tx, nil
}

// write puts line at offset off (the committed length) and, in fsync
// mode, syncs it. On any failure it truncates the file back to off; if
// even that fails the store is marked broken and refuses later commits.
// writable says why nothing can be appended any more: the store is
// closed, or an earlier failure left the file in doubt.
func (s *Store) writable() error {
	// Only the queue holder writes these fields, so reading them
	// without s.mu is safe; s.mu orders them for State readers.
	if s.closed {
		return fmt.Errorf("session %s: %w", s.id, os.ErrClosed)
	}
	if s.broken != nil {
		var te *TamperedError
		if errors.As(s.broken, &te) {
			return te
		}
		return fmt.Errorf("session %s: an earlier failed append could not be undone: %w", s.id, s.broken)
	}
	return nil
}

// numbered is a copy of facts with their sequence numbers, the commit's
// time and an id where they have none.
func (s *Store) numbered(facts []session.Fact) ([]session.Fact, error) {
	tx := make([]session.Fact, len(facts))
	copy(tx, facts)
	now := s.clock().UnixMilli()
	for i := range tx {
		tx[i].Seq = s.nextSeq + int64(i)
		tx[i].Timestamp = now
		if tx[i].ID == "" {
			id, err := s.newID()
			if err != nil {
				return nil, fmt.Errorf("session %s: %w", s.id, err)
			}
			tx[i].ID = id
		}
	}
	return tx, nil
}

func (s *Store) write(line []byte, off int64) error {
	n, err := s.sink.WriteAt(line, off)
	if err == nil && n < len(line) {
		err = io.ErrShortWrite
	}
	if err == nil && s.fsync {
		err = s.sink.Sync()
	}
	if err == nil {
		return nil
	}
	if terr := s.sink.Truncate(off); terr != nil {
		s.broken = terr
		return fmt.Errorf("%w (and truncating back to %d bytes failed: %v)", err, off, terr)
	}
	return err
}

// Close waits for the commit in progress, releases the lock and closes the
// file. Later commits fail with os.ErrClosed.
func (s *Store) Close() error {
	s.queue.acquire(context.Background())
	defer s.queue.release()
	if s.closed {
		return nil
	}
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	// Closing the file's only descriptor releases the flock.
	s.ledger.close()
	return s.closeFiles()
}

// syncDirPath fsyncs the directory at path.
func syncDirPath(path string) error {
	d, err := os.Open(path)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", path, err)
	}
	return nil
}

// HasToolStarted reports whether id is the fact id of a committed
// toolStarted record of the session.
func (s *Store) HasToolStarted(id string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.reducer.HasToolStarted(id)
}
