//go:build linux && (amd64 || arm64)

package journal

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// notif and notifResp are the kernel's seccomp_notif and seccomp_notif_resp.
type notif struct {
	id    uint64
	pid   uint32
	flags uint32
	nr    int32
	arch  uint32
	ip    uint64
	args  [6]uint64
}

type notifResp struct {
	id    uint64
	val   int64
	error int32
	flags uint32
}

// supervisor answers the filter's notifications for one command.
type supervisor struct {
	fd    int
	tree  string // canonical
	jdir  string // canonical; never journaled
	j     *journal
	calls map[uintptr]call
	stop  atomic.Bool
	err   error // the first failure to journal (that call failed: failedErrno)
	// exclude are folders never journaled (Options.Exclude, as given and
	// resolved); writable is Options.Writable.
	exclude  []string
	writable func(abs string) bool
	pid      int       // the caller of the call being handled
	dirs     [2]string // resolveDir's last: a directory, resolved
}

// run answers notifications until every filtered process is gone (the
// listener hangs up) or stop is set.
func (s *supervisor) run() {
	for {
		pfd := []unix.PollFd{{Fd: int32(s.fd), Events: unix.POLLIN}}
		n, err := unix.Poll(pfd, 100)
		if err != nil && !errors.Is(err, unix.EINTR) {
			s.fail(fmt.Errorf("journal: poll the seccomp listener: %w", err))
			return
		}
		if n == 0 || err != nil {
			if s.stop.Load() {
				return
			}
			continue
		}
		if pfd[0].Revents&unix.POLLIN == 0 {
			return // POLLHUP: no process left
		}
		var req notif
		if err := ioctl(s.fd, unix.SECCOMP_IOCTL_NOTIF_RECV, unsafe.Pointer(&req)); err != nil {
			continue // the caller died meanwhile (ENOENT)
		}
		resp := notifResp{id: req.id, flags: unix.SECCOMP_USER_NOTIF_FLAG_CONTINUE}
		v, err := s.handle(&req)
		switch {
		case err != nil:
			s.fail(err)
			resp.flags, resp.error = 0, -int32(failedErrno(err))
		case v.sent:
			continue
		case v.done:
			resp.flags, resp.error = 0, -int32(v.errno)
		}
		_ = ioctl(s.fd, unix.SECCOMP_IOCTL_NOTIF_SEND, unsafe.Pointer(&resp))
	}
}

// failedErrno is what a call fails with when its pre-image could not be
// kept: a full disk or quota as such (the command says "No space left on
// device", as plain bash would on that disk), anything else EIO.
func failedErrno(err error) unix.Errno {
	for _, e := range []unix.Errno{unix.ENOSPC, unix.EDQUOT} {
		if errors.Is(err, e) {
			return e
		}
	}
	return unix.EIO
}

func (s *supervisor) fail(err error) {
	if s.err == nil {
		s.err = err
	}
}

func ioctl(fd int, req uint, arg unsafe.Pointer) error {
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(req), uintptr(arg))
	if errno != 0 {
		return errno
	}
	return nil
}

// target is a trapped call as the supervisor reads it.
type target struct {
	pid         int
	args        [6]uint64
	path, path2 string // absolute, lexically clean
	flags       uint64
}

// verdict is how a trapped call ends: it goes on (the zero value), the
// supervisor made it itself (done, with errno as its result), or the
// supervisor already answered it (sent, by handing over an fd).
type verdict struct {
	done, sent bool
	errno      unix.Errno
}

// handle journals what the call is about to change.
func (s *supervisor) handle(req *notif) (verdict, error) {
	c, ok := s.calls[uintptr(req.nr)]
	if !ok {
		return verdict{}, nil
	}
	if (c.kind == kSetfl || c.kind == kDup) && s.j.lens == 0 && !inRangedBand(req.args[0]) {
		// No fd opened to append (a length kept) to watch: a shell copies
		// fd 1 at each redirection.
		return verdict{}, nil
	}
	s.pid = int(req.pid)
	s.dirs = [2]string{}
	t, err := s.decode(req, c)
	if err != nil {
		return verdict{}, nil // unreadable memory: the call itself fails with EFAULT
	}
	// The pid may have died and been reused while its memory was read.
	if ioctl(s.fd, unix.SECCOMP_IOCTL_NOTIF_ID_VALID, unsafe.Pointer(&req.id)) != nil {
		return verdict{}, nil
	}
	nr := uintptr(req.nr)
	switch {
	case c.kind == kRemove && s.in(t.path) && isRmdir(nr, t.flags) && s.mayRemove(t.pid, t.path):
		errno, err := s.j.rmdir(t.path)
		return verdict{done: true, errno: errno}, err
	case c.kind == kOpen:
		sent, err := s.open(req, t, nr)
		return verdict{sent: sent}, err
	case c.kind == kDup || c.kind == kSetfl && t.args[1] != unix.F_SETFL:
		sent, err := s.dup(req, t, nr)
		return verdict{sent: sent}, err
	}
	return verdict{}, s.change(t, c, nr)
}

func isRmdir(nr uintptr, flags uint64) bool {
	return nr == rmdirNr || (nr == unix.SYS_UNLINKAT && flags&unix.AT_REMOVEDIR != 0)
}

func (s *supervisor) change(t target, c call, nr uintptr) error {
	switch c.kind {
	case kWrite:
		return s.write(t, nr)
	case kWhole:
		return s.whole(t, nr)
	case kTruncate:
		return s.content(s.follow(t.path), levelFull)
	case kFdWrite:
		if r, _, _ := s.bandFile(t.pid, t.args[0]); r != nil {
			return s.bandResize(r, t, nr)
		}
		return s.content(t.path, levelFull)
	case kBind:
		return s.bind(t)
	case kSetfl:
		return s.setfl(t)
	case kRemove:
		if s.in(t.path) {
			return s.j.removed(t.path)
		}
	case kRename:
		if s.in(t.path) || s.in(t.path2) {
			return s.j.renamed(t.path, t.path2, s.in(t.path), s.in(t.path2), int(t.flags),
				func() bool { return s.mayRemove(t.pid, t.path2) })
		}
	case kCreate:
		if s.in(t.path) {
			return s.j.created(t.path)
		}
	case kMeta:
		return s.meta(t, c)
	}
	return nil
}

// decode reads a call's paths from the caller's memory and makes them
// absolute against its directory fds or working directory.
func (s *supervisor) decode(req *notif, c call) (target, error) {
	t := target{pid: int(req.pid), args: req.args}
	if c.kind == kWrite || c.kind == kWhole || c.kind == kBind || c.kind == kDup {
		return t, nil // band calls read their fd in band.go
	}
	if c.flags != noArg {
		t.flags = req.args[c.flags]
	}
	if c.kind == kSetfl {
		t.flags = req.args[2] // fcntl(fd, F_SETFL, flags)
	}
	if req.nr == unix.SYS_OPENAT2 {
		var how [8]byte
		if err := readMem(t.pid, req.args[2], how[:]); err != nil {
			return t, err
		}
		t.flags = binary.LittleEndian.Uint64(how[:])
	}
	if c.fd != noArg && (c.path == noArg || req.args[c.path] == 0) {
		p, err := os.Readlink(procFd(t.pid, int32(req.args[c.fd])))
		t.path = p
		return t, err
	}
	var err error
	if t.path, err = s.pathArg(req, c.dir, c.path); err != nil || c.path2 == noArg {
		return t, err
	}
	t.path2, err = s.pathArg(req, c.dir2, c.path2)
	return t, err
}

func procFd(pid int, fd int32) string {
	return "/proc/" + strconv.Itoa(pid) + "/fd/" + strconv.Itoa(int(fd))
}

func (s *supervisor) pathArg(req *notif, dirArg, pathArg int) (string, error) {
	p, err := readString(int(req.pid), req.args[pathArg])
	if err != nil {
		return "", err
	}
	if filepath.IsAbs(p) {
		return ownProc(int(req.pid), filepath.Clean(p)), nil
	}
	base := "/proc/" + strconv.Itoa(int(req.pid)) + "/cwd"
	if dirArg != noArg && int32(req.args[dirArg]) != unix.AT_FDCWD {
		base = procFd(int(req.pid), int32(req.args[dirArg]))
	}
	dir, err := os.Readlink(base)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, p), nil
}

// ownProc makes the caller's names for itself (/proc/self, /dev/fd,
// /dev/stdout) name it, not the supervisor that resolves them.
func ownProc(pid int, p string) string {
	own := "/proc/" + strconv.Itoa(pid)
	for _, alias := range [][2]string{
		{"/proc/self", own}, {"/proc/thread-self", own + "/task/" + strconv.Itoa(pid)}, {"/dev/fd", own + "/fd"},
		{"/dev/stdin", own + "/fd/0"}, {"/dev/stdout", own + "/fd/1"}, {"/dev/stderr", own + "/fd/2"},
	} {
		if rest, ok := strings.CutPrefix(p, alias[0]); ok && (rest == "" || rest[0] == '/') {
			return alias[1] + rest
		}
	}
	return p
}

func readMem(pid int, addr uint64, buf []byte) error {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/mem")
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = f.ReadAt(buf, int64(addr))
	return err
}

// readString reads a NUL-terminated path (at most PATH_MAX) at addr.
func readString(pid int, addr uint64) (string, error) {
	// One system call, where /proc/<pid>/mem takes an open, a read and a
	// close: a build makes thousands of trapped calls.
	buf := make([]byte, unix.PathMax)
	local := []unix.Iovec{{Base: &buf[0], Len: uint64(len(buf))}}
	remote := []unix.RemoteIovec{{Base: uintptr(addr), Len: len(buf)}}
	if n, err := unix.ProcessVMReadv(pid, local, remote, 0); n > 0 {
		if i := bytes.IndexByte(buf[:n], 0); i >= 0 {
			return string(buf[:i]), nil
		}
	} else if err != nil && err != unix.EFAULT && err != unix.ENOSYS && err != unix.EPERM {
		return "", err
	}
	return readStringMem(pid, addr)
}

// readStringMem reads a string through /proc/<pid>/mem.
func readStringMem(pid int, addr uint64) (string, error) {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/mem")
	if err != nil {
		return "", err
	}
	defer f.Close()
	buf := make([]byte, unix.PathMax)
	n, err := f.ReadAt(buf, int64(addr))
	if i := bytes.IndexByte(buf[:n], 0); i >= 0 {
		return string(buf[:i]), nil
	}
	if err == nil {
		err = unix.ENAMETOOLONG
	}
	return "", err
}

// in says whether path is inside the tree (and not the journal, nor an
// excluded folder).
func (s *supervisor) in(path string) bool {
	return within(s.tree, path) && !s.excluded(path)
}

func within(root, path string) bool {
	return path == root || strings.HasPrefix(path, root+"/")
}

// follow resolves symbolic links in path as a call that follows them does;
// a name that does not exist yet keeps its resolved directory.
func (s *supervisor) follow(path string) string {
	if p, ok := resolve(path, 0); ok {
		d := filepath.Dir(p)
		s.dirs = [2]string{d, d}
		return p
	}
	if d, ok := s.resolveDir(filepath.Dir(path)); ok {
		return filepath.Join(d, filepath.Base(path))
	}
	return path
}

// resolveDir is dir with its links resolved, remembered for the call
// being handled: excluded asks again for the folder follow resolved (a
// resolved folder resolves to itself).
func (s *supervisor) resolveDir(dir string) (string, bool) {
	if dir == s.dirs[0] || dir == s.dirs[1] {
		return s.dirs[1], true
	}
	r, ok := resolve(dir, unix.O_DIRECTORY)
	if ok {
		s.dirs = [2]string{dir, r}
	}
	return r, ok
}

// resolve resolves path with the kernel's own walk: one open, where a
// walk in Go takes an lstat per name, and a build makes thousands of
// trapped calls.
func resolve(path string, flags int) (string, bool) {
	fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC|flags, 0)
	if err != nil {
		return "", false
	}
	defer unix.Close(fd)
	p, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
	return p, err == nil && filepath.IsAbs(p)
}

// open journals a write-open: a name it creates, the length before an
// append, a whole pre-image before a truncation or an in-place write of a
// small file; a big file opened in place goes in the band (sent: the open
// is answered).
func (s *supervisor) open(req *notif, t target, nr uintptr) (sent bool, err error) {
	if nr == creatNr {
		t.flags = unix.O_WRONLY | unix.O_CREAT | unix.O_TRUNC
	}
	if t.flags&writeFlags == 0 {
		return false, nil
	}
	p := t.path
	if t.flags&unix.O_NOFOLLOW == 0 {
		p = s.follow(p)
	}
	if !s.in(p) {
		return false, nil
	}
	st, err := lstat(p)
	if err != nil {
		if t.flags&unix.O_CREAT != 0 {
			return false, s.j.absent(p)
		}
		return false, nil
	}
	if t.flags&(unix.O_CREAT|unix.O_EXCL) == unix.O_CREAT|unix.O_EXCL {
		return false, nil // fails with EEXIST
	}
	acc := t.flags & unix.O_ACCMODE
	switch {
	case st.Mode&unix.S_IFMT != unix.S_IFREG: // a write to a FIFO sets its times
		return false, s.j.saveMeta(p)
	case t.flags&unix.O_TRUNC != 0:
		return false, s.j.saveContent(p, st, levelFull)
	case acc == unix.O_WRONLY && t.flags&unix.O_APPEND != 0 && st.Size >= bandMin && s.j.content[idOf(st)] < levelFull:
		keep := func() error { return s.j.saveContent(p, st, levelLen) }
		if sent, err := s.band(req, t, p, st, appendLo, bandHi, keep); sent || err != nil {
			return sent, err
		}
		return false, s.j.saveContent(p, st, levelFull)
	case acc != unix.O_RDONLY && st.Size >= bandMin && s.j.content[idOf(st)] < levelFull:
		keep := func() error { return s.j.startRanges(p, st) }
		if sent, err := s.band(req, t, p, st, bandLo, appendLo, keep); sent || err != nil {
			return sent, err
		}
		return false, s.j.saveContent(p, st, levelFull)
	case acc != unix.O_RDONLY:
		return false, s.j.saveContent(p, st, levelFull)
	}
	return false, nil
}

func (s *supervisor) content(path string, level int) error {
	if !s.in(path) {
		return nil
	}
	st, err := lstat(path)
	if err != nil {
		return nil
	}
	return s.j.saveContent(path, st, level)
}

// setfl: an fd whose file kept only its length may lose O_APPEND and
// write anywhere, so the whole file is kept first.
func (s *supervisor) setfl(t target) error {
	if t.flags&unix.O_APPEND != 0 || !s.in(t.path) {
		return nil
	}
	st, err := lstat(t.path)
	if err != nil || s.j.content[idOf(st)] != levelLen {
		return nil
	}
	return s.j.saveContent(t.path, st, levelFull)
}

// meta keeps the mode, owner and times of the name and, for a call that
// follows links, of what it points to.
func (s *supervisor) meta(t target, c call) error {
	for _, p := range []string{t.path, s.follow(t.path)} {
		if s.in(p) {
			if err := s.j.saveMeta(p); err != nil {
				return err
			}
		}
		if !c.follow {
			break
		}
	}
	return nil
}
