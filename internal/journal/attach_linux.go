//go:build linux && (amd64 || arm64)

package journal

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Options says what a Supervision must never touch for the command.
type Options struct {
	// Exclude are absolute folders never journaled: the state folder and
	// the paths the sandbox hides from the command. A write there fails in
	// the command's namespace anyway, and a pre-image kept in the journal
	// would copy a hidden file (tiny-go's state key) into a readable place.
	Exclude []string
	// Writable says whether the command may write the file at abs (its
	// Landlock roots, its mounts). The band opens a big file with
	// tiny-go's own rights on the command's behalf: only when Writable
	// says yes (nil: never) and the command's uid may write the file.
	Writable func(abs string) bool
	// Volatile never syncs records and pre-images: a SIGKILL of tiny-go
	// loses nothing (the page cache survives it), a power cut may lose
	// what the journal kept last, as the overlay's volatile upper layer
	// may. Each sync otherwise costs a change that destroys something (a
	// rename, an unlink, an append) a round trip to the disk.
	Volatile bool
}

// Supervision journals the calls of a command started elsewhere with the
// journal's filter (Filter) installed.
type Supervision struct {
	listener *os.File
	sup      *supervisor
	done     chan struct{}
}

// Filter is the journal's seccomp program as the kernel's array of
// struct sock_filter (8 bytes each, native byte order): bytes, so that
// the same signature builds everywhere. A process that installs it with
// SECCOMP_FILTER_FLAG_NEW_LISTENER hands the listener to Attach.
func Filter() ([]byte, error) {
	f, err := program()
	if err != nil {
		return nil, err
	}
	b := make([]byte, 0, 8*len(f))
	for _, ins := range f {
		b = binary.NativeEndian.AppendUint16(b, ins.Code)
		b = append(b, ins.Jt, ins.Jf)
		b = binary.NativeEndian.AppendUint32(b, ins.K)
	}
	return b, nil
}

// Attach supervises listener (a seccomp listener of Filter's program,
// owned from now on), journaling into dir (made if need be, on the tree's
// file system) what the command changes under tree. The command's paths
// are resolved as tiny-go sees them: it must see the tree at the same path.
// On an error the listener is closed: the command's trapped calls then
// fail with ENOSYS, and the caller ends it.
func Attach(listener *os.File, tree, dir string, o Options) (*Supervision, error) {
	sup, err := prepare(tree, dir, o)
	if err != nil {
		listener.Close()
		return nil, err
	}
	return attach(listener, sup), nil
}

// prepare opens the journal and the supervisor that writes it.
func prepare(tree, dir string, o Options) (*supervisor, error) {
	j, err := openJournal(dir)
	if err != nil {
		return nil, err
	}
	j.volatile = o.Volatile
	sup, err := newSupervisor(tree, dir, j, o)
	if err != nil {
		j.close()
		return nil, err
	}
	return sup, nil
}

func attach(listener *os.File, sup *supervisor) *Supervision {
	sup.fd = int(listener.Fd())
	// The command waits on tiny-go at every trapped call: woken on the
	// same CPU, a round trip is shorter (kernel 6.6+; older ones refuse
	// the flag, and it is only an optimisation).
	_, _, _ = unix.Syscall(unix.SYS_IOCTL, uintptr(sup.fd), unix.SECCOMP_IOCTL_NOTIF_SET_FLAGS, unix.SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP)
	s := &Supervision{listener: listener, sup: sup, done: make(chan struct{})}
	go func() { defer close(s.done); sup.run() }()
	return s
}

// Stop ends the supervision, once the command's processes have ended (or
// been killed): a process left behind gets ENOSYS from a call the journal
// would trap. It closes the listener, syncs and closes the journal, and
// returns the first failure to journal.
func (s *Supervision) Stop() error {
	s.sup.stop.Store(true)
	<-s.done
	s.listener.Close()
	if cerr := s.sup.j.close(); s.sup.err == nil {
		s.sup.err = cerr
	}
	return s.sup.err
}

func newSupervisor(tree, dir string, j *journal, o Options) (*supervisor, error) {
	t, err := filepath.EvalSymlinks(tree)
	if err != nil {
		return nil, fmt.Errorf("journal: resolve the tree: %w", err)
	}
	d, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, fmt.Errorf("journal: resolve the journal: %w", err)
	}
	s := &supervisor{fd: -1, tree: t, jdir: d, j: j, calls: calls(), writable: o.Writable}
	for _, e := range o.Exclude {
		if !filepath.IsAbs(e) {
			return nil, fmt.Errorf("journal: excluded folder %q is not absolute", e)
		}
		s.exclude = append(s.exclude, filepath.Clean(e))
		if r, err := filepath.EvalSymlinks(e); err == nil && r != filepath.Clean(e) {
			s.exclude = append(s.exclude, r)
		}
	}
	j.guard = s.ownsFd
	return s, nil
}

// excluded says whether path, as named or with its folder's links
// resolved (a link in the tree may lead into a hidden folder), is in an
// excluded folder or the journal.
func (s *supervisor) excluded(path string) bool {
	if s.under(path) {
		return true
	}
	if len(s.exclude) == 0 {
		return false
	}
	d, ok := s.resolveDir(filepath.Dir(path))
	return ok && s.under(filepath.Join(d, filepath.Base(path)))
}

func (s *supervisor) under(path string) bool {
	if within(s.jdir, path) {
		return true
	}
	for _, e := range s.exclude {
		if within(e, path) {
			return true
		}
	}
	return false
}

// ownsFd says whether an fd tiny-go opened to keep a pre-image (or to
// hand over in the band) is a file of the tree it may journal: checked on
// the fd, after the open, a folder swapped for a link meanwhile cannot
// lead it into an excluded one.
//
// As root, a copy of what the command could not read itself (a file of
// another uid; the command has no capability) is not kept either: the
// journal's files are root's, which the command is.
func (s *supervisor) ownsFd(fd int, content bool) bool {
	p, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
	if err != nil || !within(s.tree, p) || s.under(p) {
		return false
	}
	if !content || os.Geteuid() != 0 {
		return true // the command's uid is tiny-go's, with the same rights
	}
	var st unix.Stat_t
	id, err := readCreds(s.pid)
	return err == nil && unix.Fstat(fd, &st) == nil && id.allows(p, &st, 0o4)
}

// mayBand says whether the command may open path as flags asks itself,
// so that the band's open with tiny-go's rights grants it nothing more.
func (s *supervisor) mayBand(pid int, path string, st *unix.Stat_t, flags uint64) bool {
	if s.writable == nil || !s.writable(path) {
		return false
	}
	bits := uint32(0o2)
	if flags&unix.O_ACCMODE == unix.O_RDWR {
		bits |= 0o4
	}
	id, err := readCreds(pid)
	return err == nil && id.allows(path, st, bits)
}

// creds are what the kernel checks a process's write-open against.
type creds struct {
	fsuid, fsgid uint32
	groups       []uint32
	dacOverride  bool // CAP_DAC_OVERRIDE, in tiny-go's user namespace
}

func readCreds(pid int) (creds, error) {
	var c creds
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return c, err
	}
	for line := range strings.Lines(string(b)) {
		key, val, _ := strings.Cut(strings.TrimSpace(line), ":")
		f := strings.Fields(val)
		switch {
		case key == "Uid" && len(f) == 4:
			c.fsuid = atou(f[3])
		case key == "Gid" && len(f) == 4:
			c.fsgid = atou(f[3])
		case key == "Groups":
			for _, g := range f {
				c.groups = append(c.groups, atou(g))
			}
		case key == "CapEff":
			caps, _ := strconv.ParseUint(strings.TrimSpace(val), 16, 64)
			c.dacOverride = caps&(1<<unix.CAP_DAC_OVERRIDE) != 0 && sameUserNS(pid)
		}
	}
	return c, nil
}

func atou(s string) uint32 { n, _ := strconv.ParseUint(s, 10, 32); return uint32(n) }

func sameUserNS(pid int) bool {
	a, err1 := os.Readlink("/proc/self/ns/user")
	b, err2 := os.Readlink("/proc/" + strconv.Itoa(pid) + "/ns/user")
	return err1 == nil && err2 == nil && a == b
}

// mayRemove says whether the command may remove the name path itself:
// tiny-go removes an empty directory on its behalf (rmdir, a rename onto
// one, so that Restore gives the same inode back), which must grant it
// nothing its Landlock domain (Options.Writable of the folder) or its
// uid would not. When not, the call goes on and the kernel decides.
func (s *supervisor) mayRemove(pid int, path string) bool {
	dir := filepath.Dir(path)
	if s.writable == nil || !s.writable(dir) {
		return false
	}
	parent, err1 := lstat(dir)
	victim, err2 := lstat(path)
	id, err3 := readCreds(pid)
	if err1 != nil || err2 != nil || err3 != nil || !id.allows(dir, parent, 0o3) {
		return false
	}
	// In a sticky folder, only the owner of the name or of the folder.
	return id.dacOverride || parent.Mode&unix.S_ISVTX == 0 || id.fsuid == victim.Uid || id.fsuid == parent.Uid
}

// allows is the kernel's permission check of bits (0o4 read, 0o2
// write, 0o1 search): the mode bits of the class the process is in; a file with an
// access ACL is judged refused (then tiny-go does nothing on the
// command's behalf: no harm, only a copy, or the kernel's own decision).
func (c creds) allows(path string, st *unix.Stat_t, bits uint32) bool {
	if c.dacOverride {
		return true
	}
	if n, err := unix.Getxattr(path, "system.posix_acl_access", nil); err == nil && n > 0 {
		return false
	}
	shift := 0
	switch {
	case st.Uid == c.fsuid:
		shift = 6
	case st.Gid == c.fsgid || containsID(c.groups, st.Gid):
		shift = 3
	}
	return (st.Mode>>shift)&bits == bits
}

func containsID(ids []uint32, id uint32) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}
