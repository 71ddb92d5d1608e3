// Package overlay makes one command a transaction over the working
// directory. The command runs on an overlay mount of the tree (the sandbox
// mounts it in the command's own mount namespace): the tree is the lower
// layer, and everything the command creates, changes or deletes lands in a
// per-command upper directory instead. When the command has ended, the
// upper layer is exactly what it changed, and Apply brings that into the
// tree by renames: each original is moved aside into the transaction's
// directory (kept at no cost, for a rewind), then each new version is moved
// in. A journal written before the first rename lets Recover finish an
// apply that a crash interrupted.
//
// A transaction's directory, <root>/<id>:
//
//	upper/, work/   the overlay's upper and work directories
//	start           created at Begin: its ctime is the file system's clock then
//	journal.json    the changes, written before the first rename
//	orig/<path>     what the tree had at each changed path, moved aside
//	conflicts/<path> the command's version of a path another program changed meanwhile
//	layers          with BeginApart: the folder of upper/ and work/, elsewhere
//	staged/<path>   with BeginApart: what the command changed, copied onto the tree's file system
//
// The root must be on the tree's file system (renames), and may lie inside
// the tree: the kernel accepts an upper layer inside the lower one and only
// refuses to look it up through the overlay (ELOOP); the sandbox hides it
// behind the read-only state directory anyway.
//
// A tree that is itself an overlay (a fleet worker's workspace, a
// container's root) cannot hold an upper layer: overlayfs refuses to be
// one. BeginApart then puts upper/ and work/ on another file system, and
// Apply first copies what the command changed into staged/ (the changes
// only, not the tree), then goes on by renames from there.
package overlay

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tiny-agent/tiny-go/internal/statekey"
)

// Names inside a transaction's directory.
const (
	upperName    = "upper"
	workName     = "work"
	layersName   = "layers"
	stagedName   = "staged"
	startName    = "start"
	journalName  = "journal.json"
	origName     = "orig"
	conflictName = "conflicts"
)

// ErrOtherFS is returned by Begin when the root is not on the tree's file
// system: applying would copy, not rename.
var ErrOtherFS = errors.New("the transaction directory is not on the working directory's file system")

// Tx is one command's transaction.
type Tx struct {
	ID   string
	Dir  string // <root>/<id>
	Tree string // the working directory
	base unix.Timespec
	root string
	lock *os.File // the pending marker, locked while this process owns the transaction
	// apart is the folder of upper/ and work/ on another file system
	// (BeginApart), "" when they are in Dir.
	apart string
}

// Begin creates the directories of transaction id under root for a command
// over tree. The upper directory's root takes the tree's mode (and owner,
// when it can), so the command sees the tree's root as it is.
func Begin(root, tree, id string) (*Tx, error) { return BeginApart(root, "", tree, id) }

// BeginApart is Begin with the overlay's upper and work directories in
// layers/<id> instead (layers "" is Begin): for a tree whose file system
// cannot be an upper layer. Its path is written down first, so a later
// process finds them (Recover).
func BeginApart(root, layers, tree, id string) (*Tx, error) {
	var rst, tst unix.Stat_t
	if err := os.MkdirAll(root, 0o700); err != nil {
		return nil, err
	}
	if err := unix.Stat(root, &rst); err != nil {
		return nil, err
	}
	if err := unix.Stat(tree, &tst); err != nil {
		return nil, err
	}
	if rst.Dev != tst.Dev {
		return nil, ErrOtherFS
	}
	t := &Tx{ID: id, Dir: filepath.Join(root, id), Tree: tree, root: root}
	if err := t.markPending(); err != nil {
		return nil, err
	}
	if err := os.Mkdir(t.Dir, 0o700); err != nil {
		t.finish()
		return nil, err
	}
	if layers != "" {
		t.apart = filepath.Join(layers, id)
		sealed, err := statekey.Seal(t.purpose(layersName), []byte(t.apart))
		if err != nil {
			return nil, err
		}
		if err := writeFile(filepath.Join(t.Dir, layersName), sealed); err != nil {
			return nil, err
		}
		if err := os.MkdirAll(t.apart, 0o700); err != nil {
			return nil, err
		}
	}
	for _, d := range []string{t.Upper(), t.Work()} {
		if err := os.Mkdir(d, 0o700); err != nil {
			return nil, err
		}
	}
	up := t.Upper()
	_ = os.Lchown(up, int(tst.Uid), int(tst.Gid)) // only root can; others own both anyway
	if err := os.Chmod(up, fs.FileMode(tst.Mode&0o7777)); err != nil {
		return nil, err
	}
	// The file system's own clock, which may lag the wall clock: a path
	// of the tree whose ctime is later was changed by someone else while
	// the command ran.
	f, err := os.Create(filepath.Join(t.Dir, startName))
	if err != nil {
		return nil, err
	}
	f.Close()
	var st unix.Stat_t
	if err := unix.Stat(filepath.Join(t.Dir, startName), &st); err != nil {
		return nil, err
	}
	t.base = st.Ctim
	return t, nil
}

// Open is an existing transaction (for Recover and rewinds).
func Open(root, tree, id string) (*Tx, error) {
	t := &Tx{ID: id, Dir: filepath.Join(root, id), Tree: tree, root: root}
	var st unix.Stat_t
	if err := unix.Stat(filepath.Join(t.Dir, startName), &st); err != nil {
		return nil, fmt.Errorf("transaction %s: %w", id, err)
	}
	t.base = st.Ctim
	return t, t.loadApart()
}

// loadApart reads where BeginApart put the layers: only what tiny-go
// sealed, and only a folder named after the transaction (a forged one
// would have the next start delete any directory).
func (t *Tx) loadApart() error {
	data, err := os.ReadFile(filepath.Join(t.Dir, layersName))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	}
	if data, err = statekey.Open(t.purpose(layersName), data); err != nil {
		return &RefusedError{ID: t.ID, What: "its layers file", Err: err}
	}
	if p := string(data); !filepath.IsAbs(p) || filepath.Clean(p) != p || filepath.Base(p) != t.ID {
		return &RefusedError{ID: t.ID, What: "its layers file", Err: fmt.Errorf("%q is not a folder of this transaction", p)}
	}
	t.apart = string(data)
	return nil
}

// purpose binds a sealed file to its name and transaction: a file copied
// from another transaction, or to another name, does not open.
func (t *Tx) purpose(name string) string { return "tx/" + t.ID + "/" + name }

// RefusedError is a transaction whose state tiny-go did not write (a
// forged or changed file under .tiny-agent): nothing of it is used.
type RefusedError struct {
	ID   string
	What string
	Err  error
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("refused command transaction %s: %s: %v; nothing of it was applied, nothing outside .tiny-agent was removed", e.ID, e.What, e.Err)
}

func (e *RefusedError) Unwrap() error { return e.Err }

// Upper and Work are the overlay's directories.
func (t *Tx) Upper() string { return filepath.Join(t.layers(), upperName) }
func (t *Tx) Work() string  { return filepath.Join(t.layers(), workName) }

func (t *Tx) layers() string {
	if t.apart != "" {
		return t.apart
	}
	return t.Dir
}

// Orig is where the tree's entry at path (slash-separated, relative) was
// moved by Apply.
func (t *Tx) Orig(path string) string {
	return filepath.Join(t.Dir, origName, filepath.FromSlash(path))
}

// Discard drops the command's changes (a review that was denied) and
// ends the transaction: its directory goes, the tree is untouched.
func (t *Tx) Discard() error { return t.Remove() }

// Remove ends a transaction that changed nothing (or whose changes are
// dropped) and removes its directory.
func (t *Tx) Remove() error {
	err := t.removeLayers()
	if err == nil {
		err = os.RemoveAll(t.Dir)
	}
	t.finish()
	return err
}

// removeLayers removes the overlay's directories.
func (t *Tx) removeLayers() error {
	var first error
	dirs := []string{t.Upper(), t.Work()}
	if t.apart != "" {
		dirs = append(dirs, t.apart, filepath.Join(t.Dir, stagedName))
	}
	for _, d := range dirs {
		if err := removeAll(d); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// removeAll is os.RemoveAll that first makes directories writable: the
// kernel leaves work/work with mode 000.
func removeAll(dir string) error {
	os.Chmod(filepath.Join(dir, "work"), 0o700) // the kernel's work/work
	if err := os.RemoveAll(dir); err == nil {
		return nil
	}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if d != nil && d.IsDir() {
			os.Chmod(p, 0o700)
		}
		return nil
	})
	return os.RemoveAll(dir)
}

// Options is what the sandbox mounts: the mount(2) data of the overlay,
// and whether it can be expressed at all (commas and colons separate
// layers and options, so paths holding them cannot be given).
func Options(lower, upper, work string, userNS bool) (string, error) {
	for _, p := range []string{lower, upper, work} {
		for _, c := range p {
			if c == ',' || c == ':' || c == '\\' {
				return "", fmt.Errorf("the path %s holds %q, which overlay mount options cannot carry", p, c)
			}
		}
	}
	// metacopy off: every changed file is whole in the upper layer.
	// redirect_dir on: a renamed directory of the tree is its directory
	// alone, marked with where it was, not a copy of all it holds (Apply
	// renames it; see rename.go). userxattr implies redirect_dir=nofollow
	// and metacopy=off and refuses any other: a user namespace has no
	// trusted xattrs, which redirects need, so there a rename stays a
	// copy (EXDEV to a program that does not copy).
	// volatile: no sync of the upper file system when the namespace
	// ends (measured: 9.6 ms of every command, against 0.8 ms). A SIGKILL
	// of tiny-go loses nothing (the page cache stays); a power cut during
	// a command may lose what it wrote.
	opts := "lowerdir=" + lower + ",upperdir=" + upper + ",workdir=" + work + ",index=off,volatile"
	if userNS {
		opts += ",userxattr"
	} else {
		opts += ",redirect_dir=on,metacopy=off"
	}
	return opts, nil
}

// pendingName is the directory of the markers of transactions not yet
// applied or discarded; a marker is locked while its process lives.
const pendingName = "pending"

func (t *Tx) markPending() error {
	dir := filepath.Join(t.root, pendingName)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	mac, err := statekey.Hex(t.purpose(pendingName))
	if err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(dir, t.ID), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		return err
	}
	t.lock = f
	if _, err := f.WriteString(mac); err != nil {
		t.finish()
		return err
	}
	return nil
}

// finish ends the transaction: it is no longer pending.
func (t *Tx) finish() {
	os.Remove(filepath.Join(t.root, pendingName, t.ID))
	if t.lock != nil {
		t.lock.Close()
		t.lock = nil
	}
}

// Recover finishes the transactions under root that a killed process left
// (their marker is pending and unlocked): an interrupted Apply is rolled
// forward from its journal, and the upper layer of a command whose process
// died before applying is applied, as its changes would have been without
// the overlay. It returns the transactions it finished.
func Recover(root, tree string) ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(root, pendingName))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var done []string
	var refused []error
	for _, e := range entries {
		ok, err := recoverOne(root, tree, e.Name())
		var r *RefusedError
		if errors.As(err, &r) {
			// Said once: the marker moves to refused/; the transaction's
			// directory stays as it was.
			os.MkdirAll(filepath.Join(root, refusedName), 0o700)
			os.Rename(filepath.Join(root, pendingName, r.ID), filepath.Join(root, refusedName, r.ID))
			refused = append(refused, r)
			continue
		}
		if err != nil {
			return done, fmt.Errorf("finishing command transaction %s: %w", e.Name(), err)
		}
		if ok {
			done = append(done, e.Name())
		}
	}
	return done, errors.Join(refused...)
}

func recoverOne(root, tree, id string) (bool, error) {
	f, err := os.OpenFile(filepath.Join(root, pendingName, id), os.O_RDWR, 0)
	if err != nil {
		return false, nil // finished meanwhile
	}
	if unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) != nil {
		f.Close()
		return false, nil // its process is running it
	}
	if !stillPending(f, filepath.Join(root, pendingName, id)) {
		// Its process finished it between the listing and the lock: it
		// removes the marker before it lets the lock go.
		f.Close()
		return false, nil
	}
	t := &Tx{ID: id, Dir: filepath.Join(root, id), Tree: tree, root: root, lock: f}
	if err := t.checkMarker(f); err != nil {
		f.Close()
		return false, err
	}
	if err := t.loadApart(); err != nil {
		f.Close()
		return false, err
	}
	if _, err := os.Lstat(filepath.Join(t.Dir, startName)); err != nil {
		t.removeLayers()
		t.finish() // killed inside Begin: nothing ran
		return true, nil
	}
	t, err = Open(root, tree, id)
	if err != nil {
		f.Close()
		return false, err
	}
	t.lock = f
	changes, journaled, err := t.Journal()
	if err != nil {
		return false, err
	}
	if !journaled {
		if stillMounted(t.Upper()) {
			// Its process is dead, but the command's processes are still
			// dying (a SIGKILL at its death, delivered late on a busy
			// machine): writing through the overlay meanwhile, they would
			// put files into the tree after the apply read the upper
			// layer, files no rewind knows of. Left for the next start.
			f.Close()
			return false, nil
		}
		if _, err := os.Lstat(t.Upper()); errors.Is(err, fs.ErrNotExist) {
			// Killed inside Remove, between its layers and the rest (a
			// command that changed nothing, or a discarded one), or its
			// layers were on a machine that is gone (a fleet's workspace
			// rebuilt elsewhere): nothing of it is here to apply.
			return true, t.Remove()
		}
		if changes, err = t.Changes(); err != nil {
			return false, err
		}
		_, err = t.Apply(changes)
		return err == nil, err
	}
	_, err = t.run(changes)
	return err == nil, err
}

// checkMarker refuses a pending marker tiny-go did not write.
func (t *Tx) checkMarker(f *os.File) error {
	data := make([]byte, 65)
	n, _ := f.ReadAt(data, 0)
	ok, err := statekey.Check(string(data[:n]), t.purpose(pendingName))
	if err != nil || ok {
		return err
	}
	return &RefusedError{ID: t.ID, What: "its pending marker", Err: statekey.ErrForged}
}

// refusedName holds the pending markers that were refused.
const refusedName = "refused"

// stillPending reports whether the marker at path is still the file f
// was opened on.
func stillPending(f *os.File, path string) bool {
	a, err := f.Stat()
	if err != nil {
		return false
	}
	b, err := os.Lstat(path)
	return err == nil && os.SameFile(a, b)
}

// stillMounted reports whether an overlay with upper as its upper layer
// is mounted in any mount namespace (a command's processes still alive),
// waiting up to two seconds for it to go. It reads the mount table of
// each mount namespace once (found through /proc/<pid>/ns/mnt); one it
// cannot read counts as none.
func stillMounted(upper string) bool {
	needle := "upperdir=" + upper
	for deadline := time.Now().Add(2 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if !mountedIn(needle) {
			return false
		}
		if time.Now().After(deadline) {
			return true
		}
	}
}

func mountedIn(needle string) bool {
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return false
	}
	seen := map[string]bool{}
	for _, p := range procs {
		if p.Name()[0] < '0' || p.Name()[0] > '9' {
			continue
		}
		ns, err := os.Readlink(filepath.Join("/proc", p.Name(), "ns", "mnt"))
		if err != nil || seen[ns] {
			continue
		}
		seen[ns] = true
		data, err := os.ReadFile(filepath.Join("/proc", p.Name(), "mountinfo"))
		if err == nil && bytes.Contains(data, []byte(needle)) {
			return true
		}
	}
	return false
}
