//go:build linux && (amd64 || arm64)

package journal

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A big file opened for writing in place is not copied at the open. The
// supervisor opens it itself and puts the fd in a band of high numbers,
// which the filter watches: a write there is trapped, and only the bytes
// it is about to overwrite are kept. Reads, and writes to every other fd,
// never reach the supervisor. A dup or a shared writable mmap of a band fd
// (the copy would write unseen) keeps the whole file first.
//
// A big file opened to append, write-only, keeps only its length; its fd
// goes in the band's upper part, whose writes are not trapped. That is
// exact while the fd keeps O_APPEND, so F_SETFL and dups are trapped on
// the fds such an fd may be at: the band, and 0 to 2, where a shell's
// ">>" puts it. A copy anywhere else keeps the whole file first.
const (
	bandLo   = 600  // above what shells use (bash: 255), below the usual
	appendLo = 800  // [bandLo, appendLo): written in place; above: appends
	bandHi   = 1000 // soft limit of 1024 open files
)

// bandMin is the size from which a file opened in place goes in the band;
// a smaller one is copied whole at the open (a copy costs less than traps).
var bandMin int64 = 1 << 20

// ranged is a file in the band: the spans of its pre-image kept so far.
type ranged struct {
	src  *os.File // reads the pre-image bytes before a write
	data *os.File // entries: offset, length, bytes
	orig int64
	kept [][2]int64
}

type addfd struct {
	id         uint64
	flags      uint32
	srcfd      uint32
	newfd      uint32
	newfdFlags uint32
}

// band opens path for the caller and hands it the fd, between lo and hi,
// as the open's result, once keep has recorded what the journal keeps of
// it. false: not done (no free fd there, a refused fd), and the caller
// keeps the whole file instead.
func (s *supervisor) band(req *notif, t target, path string, st *unix.Stat_t, lo, hi int, keep func() error) (bool, error) {
	if !s.mayBand(t.pid, path, st, t.flags) {
		return false, nil
	}
	newfd, ok := freeBandFd(t.pid, lo, hi)
	if !ok {
		return false, nil
	}
	flags := int(t.flags) &^ (unix.O_CREAT | unix.O_EXCL | unix.O_TRUNC | unix.O_NOCTTY)
	fd, err := unix.Open(path, flags|unix.O_CLOEXEC, 0)
	if err != nil {
		return false, nil
	}
	defer unix.Close(fd)
	var got unix.Stat_t
	if unix.Fstat(fd, &got) != nil || idOf(&got) != idOf(st) || !s.ownsFd(fd, false) {
		return false, nil // swapped since the lstat
	}
	if err := keep(); err != nil {
		if errors.Is(err, errExcluded) {
			return false, nil
		}
		return false, err
	}
	a := addfd{id: req.id, flags: unix.SECCOMP_ADDFD_FLAG_SETFD | unix.SECCOMP_ADDFD_FLAG_SEND, srcfd: uint32(fd), newfd: uint32(newfd)}
	if t.flags&unix.O_CLOEXEC != 0 {
		a.newfdFlags = unix.O_CLOEXEC
	}
	if err := ioctl(s.fd, unix.SECCOMP_IOCTL_NOTIF_ADDFD, unsafe.Pointer(&a)); err != nil {
		return false, nil
	}
	return true, nil
}

func freeBandFd(pid, lo, hi int) (int, bool) {
	used, ok := usedFds(pid)
	if !ok {
		return 0, false
	}
	return freeFd(used, lo, hi)
}

// usedFds are the process's open fds.
func usedFds(pid int) (map[int]bool, bool) {
	names, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/fd")
	if err != nil {
		return nil, false
	}
	used := map[int]bool{}
	for _, n := range names {
		if fd, err := strconv.Atoi(n.Name()); err == nil {
			used[fd] = true
		}
	}
	return used, true
}

// freeFd is the lowest fd in [lo, hi) not in used.
func freeFd(used map[int]bool, lo, hi int) (int, bool) {
	for fd := lo; fd < hi; fd++ {
		if !used[fd] {
			return fd, true
		}
	}
	return 0, false
}

// startRanges records a file whose pre-image is kept span by span.
func (j *journal) startRanges(path string, st *unix.Stat_t) error {
	if r := j.ranged[idOf(st)]; r != nil || j.content[idOf(st)] == levelFull {
		return nil
	}
	src, err := j.open(path)
	if err != nil {
		return fmt.Errorf("journal: read the pre-image of %s: %w", path, err)
	}
	rel, abs := j.nextData()
	data, err := os.OpenFile(abs, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		src.Close()
		return fmt.Errorf("journal: keep the pre-image of %s: %w", path, err)
	}
	j.ranged[idOf(st)] = &ranged{src: src, data: data, orig: st.Size}
	return j.add(withMeta(record{Op: "ranges", Path: path, Data: rel, Size: st.Size}, st))
}

// keepSpan keeps the bytes [off, off+n) of the pre-image (those of the
// original length not kept yet) before a write overwrites them.
func (j *journal) keepSpan(r *ranged, off, n int64) error {
	var st unix.Stat_t
	if err := unix.Fstat(int(r.src.Fd()), &st); err != nil {
		return fmt.Errorf("journal: stat a band file: %w", err)
	}
	end := min(off+n, r.orig, st.Size)
	if off < 0 || off >= end {
		return nil // beyond the original end: the restore truncates
	}
	for _, k := range r.kept {
		if k[0] <= off && end <= k[1] {
			return nil
		}
	}
	var h [16]byte
	binary.LittleEndian.PutUint64(h[:8], uint64(off))
	binary.LittleEndian.PutUint64(h[8:], uint64(end-off))
	if _, err := r.data.Write(h[:]); err != nil {
		return fmt.Errorf("journal: keep a span: %w", err)
	}
	if _, err := io.Copy(r.data, io.NewSectionReader(r.src, off, end-off)); err != nil {
		return fmt.Errorf("journal: keep a span: %w", err)
	}
	if !j.volatile {
		if err := r.data.Sync(); err != nil {
			return fmt.Errorf("journal: sync a span: %w", err)
		}
	}
	r.kept = append(r.kept, [2]int64{off, end})
	return nil
}

// bandFile is the band file an fd of the caller is, if any.
func (s *supervisor) bandFile(pid int, fd uint64) (*ranged, string, *unix.Stat_t) {
	p := procFd(pid, int32(fd))
	var st unix.Stat_t
	if unix.Stat(p, &st) != nil {
		return nil, "", nil
	}
	r := s.j.ranged[idOf(&st)]
	if r == nil || s.j.content[idOf(&st)] == levelFull {
		return nil, "", nil
	}
	path, _ := os.Readlink(p)
	return r, path, &st
}

// write keeps the span a write to a band fd is about to overwrite.
func (s *supervisor) write(t target, nr uintptr) error {
	r, _, _ := s.bandFile(t.pid, t.args[0])
	if r == nil {
		return nil
	}
	pos, appending, err := fdPos(t.pid, t.args[0])
	if err != nil || appending {
		return nil
	}
	off, n := pos, int64(t.args[2])
	switch nr {
	case unix.SYS_PWRITE64:
		off = int64(t.args[3])
	case unix.SYS_WRITEV, unix.SYS_PWRITEV, unix.SYS_PWRITEV2:
		if n, err = iovLen(t.pid, t.args[1], t.args[2]); err != nil {
			return nil
		}
		if nr != unix.SYS_WRITEV && int64(t.args[3]) != -1 {
			off = int64(t.args[3])
		}
		if nr == unix.SYS_PWRITEV2 && t.args[5]&unix.RWF_APPEND != 0 {
			return nil
		}
	}
	return s.j.keepSpan(r, off, n)
}

// whole keeps a band file whole before a call that would let it be written
// unseen: a dup out of the band, a shared writable mmap, an in-kernel copy.
func (s *supervisor) whole(t target, nr uintptr) error {
	fd := t.args[0]
	switch nr {
	case unix.SYS_COPY_FILE_RANGE, unix.SYS_SPLICE:
		fd = t.args[2]
	case unix.SYS_MMAP:
		fd = t.args[4]
		if t.args[3]&unix.MAP_SHARED == 0 || t.args[2]&unix.PROT_WRITE == 0 {
			return nil
		}
	}
	_, path, st := s.bandFile(t.pid, fd)
	if st == nil || !s.in(path) {
		return nil
	}
	return s.j.saveContent(path, st, levelFull)
}

// dup keeps a file whole before a copy of its fd would leave the fds the
// filter watches: a band file's copy anywhere else writes unseen, an
// append's copy outside 0 to 2 and the bands could drop O_APPEND unseen.
// An append's dup or F_DUPFD that would land elsewhere lands in the band
// instead (sent: answered), as a shell's copy of a redirected fd 1 does.
func (s *supervisor) dup(req *notif, t target, nr uintptr) (sent bool, err error) {
	p := procFd(t.pid, int32(t.args[0]))
	var st unix.Stat_t
	if unix.Stat(p, &st) != nil {
		return false, nil
	}
	id := idOf(&st)
	inPlace := s.j.ranged[id] != nil
	if s.j.content[id] == levelFull || !inPlace && s.j.content[id] != levelLen {
		return false, nil
	}
	if !inPlace {
		if watched, sent := s.appendDup(req, t, nr); watched || sent {
			return sent, nil
		}
	}
	path, err := os.Readlink(p)
	if err != nil || !s.in(path) {
		return false, nil
	}
	return false, s.j.saveContent(path, &st, levelFull)
}

// appendDup says whether an append's copy lands on a watched fd as asked,
// or made it land in the band (sent).
func (s *supervisor) appendDup(req *notif, t target, nr uintptr) (watched, sent bool) {
	least := 0
	switch nr {
	case unix.SYS_DUP:
	case unix.SYS_FCNTL:
		least = int(min(t.args[2], bandHi))
	default: // dup2, dup3 name their fd
		return isWatched(t.args[1]), false
	}
	used, ok := usedFds(t.pid)
	if !ok {
		return false, false
	}
	if fd, ok := freeFd(used, least, bandHi); ok && isWatched(uint64(fd)) {
		return true, false // racing threads aside: one process's dup
	}
	newfd, ok := freeFd(used, appendLo, bandHi)
	if !ok {
		return false, false
	}
	return false, s.dupInto(req, t, newfd)
}

// dupInto makes the caller's copy of its fd at newfd: the same open file,
// fetched with pidfd_getfd.
func (s *supervisor) dupInto(req *notif, t target, newfd int) bool {
	pidfd, err := unix.PidfdOpen(t.pid, 0)
	if err != nil {
		return false
	}
	defer unix.Close(pidfd)
	fd, err := unix.PidfdGetfd(pidfd, int(t.args[0]), 0)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	a := addfd{id: req.id, flags: unix.SECCOMP_ADDFD_FLAG_SETFD | unix.SECCOMP_ADDFD_FLAG_SEND, srcfd: uint32(fd), newfd: uint32(newfd)}
	if req.nr == unix.SYS_FCNTL && t.args[1] == unix.F_DUPFD_CLOEXEC {
		a.newfdFlags = unix.O_CLOEXEC
	}
	return ioctl(s.fd, unix.SECCOMP_IOCTL_NOTIF_ADDFD, unsafe.Pointer(&a)) == nil
}

func isWatched(fd uint64) bool { return fd < 3 || fd >= bandLo && fd < bandHi }

func inRangedBand(fd uint64) bool { return fd >= bandLo && fd < appendLo }

// bandResize keeps what an ftruncate or a fallocate of a band file is
// about to destroy: the tail a shrink cuts, the range a punch or a zeroing
// clears (a collapse or an insert moves the rest: the file, whole).
func (s *supervisor) bandResize(r *ranged, t target, nr uintptr) error {
	if nr == unix.SYS_FTRUNCATE {
		return s.j.keepSpan(r, int64(t.args[1]), r.orig)
	}
	mode := t.args[1]
	switch {
	case mode&^unix.FALLOC_FL_KEEP_SIZE == 0:
		return nil // allocation only
	case mode&(unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_ZERO_RANGE) != 0 &&
		mode&(unix.FALLOC_FL_COLLAPSE_RANGE|unix.FALLOC_FL_INSERT_RANGE) == 0:
		return s.j.keepSpan(r, int64(t.args[2]), int64(t.args[3]))
	}
	return s.whole(target{pid: t.pid, args: [6]uint64{t.args[0]}}, unix.SYS_DUP)
}

// bind records the name a unix socket is bound to in the tree.
func (s *supervisor) bind(t target) error {
	if t.args[2] < 3 {
		return nil
	}
	sa := make([]byte, min(t.args[2], 110))
	if readMem(t.pid, t.args[1], sa) != nil || binary.LittleEndian.Uint16(sa) != unix.AF_UNIX || sa[2] == 0 {
		return nil // not a unix socket, or an abstract one
	}
	name := string(sa[2:])
	if i := strings.IndexByte(name, 0); i >= 0 {
		name = name[:i]
	}
	p := name
	if !filepath.IsAbs(p) {
		cwd, err := os.Readlink("/proc/" + strconv.Itoa(t.pid) + "/cwd")
		if err != nil {
			return nil
		}
		p = filepath.Join(cwd, p)
	}
	if p = s.follow(filepath.Clean(p)); !s.in(p) {
		return nil
	}
	return s.j.created(p)
}

// fdPos reads an fd's offset and whether it appends.
func fdPos(pid int, fd uint64) (int64, bool, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/fdinfo/" + strconv.FormatUint(fd, 10))
	if err != nil {
		return 0, false, err
	}
	var pos int64
	var flags uint64
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "pos:"); ok {
			pos, _ = strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		}
		if v, ok := strings.CutPrefix(line, "flags:"); ok {
			flags, _ = strconv.ParseUint(strings.TrimSpace(v), 8, 64)
		}
	}
	return pos, flags&unix.O_APPEND != 0, nil
}

// iovLen adds up the lengths of an iovec array in the caller's memory.
func iovLen(pid int, addr, count uint64) (int64, error) {
	if count > 1024 {
		return 0, unix.EINVAL
	}
	buf := make([]byte, 16*count)
	if err := readMem(pid, addr, buf); err != nil {
		return 0, err
	}
	var n int64
	for i := range count {
		n += int64(binary.LittleEndian.Uint64(buf[16*i+8:]))
	}
	return n, nil
}

// putRanges writes the kept spans back, the first kept last (it holds the
// oldest bytes), then cuts the file to its length before.
func putRanges(src string, r record) error {
	out, err := os.OpenFile(r.Path, os.O_WRONLY, 0)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return err
	}
	defer out.Close()
	if err := PutSpansTo(src, out, r.Size); err != nil {
		return err
	}
	return out.Sync()
}

// PutSpansTo writes back into out the spans kept in data (a band file's,
// read back newest last: the oldest bytes win), then cuts out to size.
func PutSpansTo(data string, out *os.File, size int64) error {
	in, err := os.Open(data)
	if err != nil {
		return err
	}
	defer in.Close()
	type span struct{ at, off, n int64 }
	var spans []span
	br := bufio.NewReader(in)
	var at int64
	for {
		var h [16]byte
		if _, err := io.ReadFull(br, h[:]); err != nil {
			break
		}
		s := span{at: at + 16, off: int64(binary.LittleEndian.Uint64(h[:8])), n: int64(binary.LittleEndian.Uint64(h[8:]))}
		if d, err := br.Discard(int(s.n)); err != nil || int64(d) != s.n {
			break // torn by a crash: that write never went on
		}
		spans = append(spans, s)
		at = s.at + s.n
	}
	for i := len(spans) - 1; i >= 0; i-- {
		s := spans[i]
		if _, err := io.Copy(io.NewOffsetWriter(out, s.off), io.NewSectionReader(in, s.at, s.n)); err != nil {
			return err
		}
	}
	return out.Truncate(size)
}
