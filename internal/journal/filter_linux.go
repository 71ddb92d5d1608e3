//go:build linux && (amd64 || arm64)

package journal

import (
	"fmt"
	"unsafe"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// kind is what a trapped call is about to change.
type kind int

const (
	kOpen     kind = iota // a write-open: flags says what it does to the file
	kTruncate             // truncate(path)
	kFdWrite              // ftruncate, fallocate: the fd's file, anywhere
	kSetfl                // fcntl: F_SETFL may drop O_APPEND, F_DUPFD copies an fd
	kDup                  // dup, dup2, dup3: an fd the filter watches, copied
	kRemove               // unlink, rmdir
	kRename               // rename, renameat, renameat2
	kCreate               // mkdir, mknod, link, symlink: a new name
	kMeta                 // chmod, chown, utimes, xattrs on a path or an fd
	kWrite                // write, pwrite64, writev, pwritev, pwritev2 to a band fd
	kWhole                // mmap, copy_file_range, sendfile, splice: a band fd's file, whole
	kDenied               // io_uring_setup, io_setup: their writes would pass unseen (EPERM)
	kBind                 // bind: a unix socket's name is a new file
)

// noArg marks an argument a call does not have.
const noArg = -1

// call says where a trapped call keeps its operands (argument indexes).
type call struct {
	kind        kind
	dir, path   int // the path and its directory fd (noArg: cwd)
	dir2, path2 int // a rename's new name
	flags       int // the open flags, unlinkat's or renameat2's flags
	fd          int // the fd a kFdWrite, kSetfl or fd kMeta is about
	follow      bool
	// flagMask, when not 0, traps only when the flags argument has one of
	// these bits (a read-only open never reaches the supervisor).
	flagMask uint32
	// band, when not noArg, traps only when that argument is an fd in the
	// band where the supervisor puts the big files it opens in place
	// (band.go); watched, only when it is an fd an append may be at.
	band, watched int
}

const writeFlags = unix.O_WRONLY | unix.O_RDWR | unix.O_TRUNC | unix.O_CREAT

func at(k kind, dir, path int) call {
	return call{kind: k, dir: dir, path: path, dir2: noArg, path2: noArg, flags: noArg, fd: noArg, band: noArg, watched: noArg}
}

func onFd(k kind, fd int) call {
	return call{kind: k, dir: noArg, path: noArg, dir2: noArg, path2: noArg, flags: noArg, fd: fd, band: noArg, watched: noArg}
}

// inBand is a call on an fd (argument i) trapped only inside the band.
func inBand(k kind, i int) call { c := onFd(k, i); c.band = i; return c }

// onWatched is a call on an fd (argument i) trapped only where an append
// whose length alone is kept may be: 0 to 2, or the bands.
func onWatched(k kind, i int) call { c := onFd(k, i); c.watched = i; return c }

// calls are the trapped system calls: the *at family here, the older
// path calls amd64 also has in legacyCalls.
func calls() map[uintptr]call {
	m := map[uintptr]call{
		unix.SYS_OPENAT:          withFlags(at(kOpen, 0, 1), 2, writeFlags),
		unix.SYS_OPENAT2:         at(kOpen, 0, 1), // flags behind a pointer: always
		unix.SYS_TRUNCATE:        at(kTruncate, noArg, 0),
		unix.SYS_FTRUNCATE:       onFd(kFdWrite, 0),
		unix.SYS_FALLOCATE:       onFd(kFdWrite, 0),
		unix.SYS_FCNTL:           onWatched(kSetfl, 0), // and only F_SETFL, F_DUPFD, F_DUPFD_CLOEXEC
		unix.SYS_WRITE:           inBand(kWrite, 0),
		unix.SYS_PWRITE64:        inBand(kWrite, 0),
		unix.SYS_WRITEV:          inBand(kWrite, 0),
		unix.SYS_PWRITEV:         inBand(kWrite, 0),
		unix.SYS_PWRITEV2:        inBand(kWrite, 0),
		unix.SYS_MMAP:            inBand(kWhole, 4),
		unix.SYS_DUP:             onWatched(kDup, 0),
		unix.SYS_DUP3:            onWatched(kDup, 0),
		unix.SYS_COPY_FILE_RANGE: inBand(kWhole, 2),
		unix.SYS_SENDFILE:        inBand(kWhole, 0),
		unix.SYS_SPLICE:          inBand(kWhole, 2),
		unix.SYS_IO_URING_SETUP:  onFd(kDenied, noArg),
		unix.SYS_BIND:            onFd(kBind, noArg),
		unix.SYS_IO_SETUP:        onFd(kDenied, noArg),
		unix.SYS_UNLINKAT:        withFlags(at(kRemove, 0, 1), 2, 0),
		unix.SYS_RENAMEAT:        rename(0, 1, 2, 3, noArg),
		unix.SYS_RENAMEAT2:       rename(0, 1, 2, 3, 4),
		unix.SYS_MKDIRAT:         at(kCreate, 0, 1),
		unix.SYS_MKNODAT:         at(kCreate, 0, 1),
		unix.SYS_LINKAT:          at(kCreate, 2, 3),
		unix.SYS_SYMLINKAT:       at(kCreate, 1, 2),
		unix.SYS_FCHMOD:          onFd(kMeta, 0),
		unix.SYS_FCHMODAT:        follow(at(kMeta, 0, 1)),
		unix.SYS_FCHMODAT2:       follow(at(kMeta, 0, 1)),
		unix.SYS_FCHOWN:          onFd(kMeta, 0),
		unix.SYS_FCHOWNAT:        follow(at(kMeta, 0, 1)),
		unix.SYS_UTIMENSAT:       withFd(follow(at(kMeta, 0, 1)), 0),
		unix.SYS_SETXATTR:        follow(at(kMeta, noArg, 0)),
		unix.SYS_LSETXATTR:       at(kMeta, noArg, 0),
		unix.SYS_FSETXATTR:       onFd(kMeta, 0),
		unix.SYS_REMOVEXATTR:     follow(at(kMeta, noArg, 0)),
		unix.SYS_LREMOVEXATTR:    at(kMeta, noArg, 0),
		unix.SYS_FREMOVEXATTR:    onFd(kMeta, 0),
	}
	for nr, c := range legacyCalls() {
		m[nr] = c
	}
	return m
}

func withFlags(c call, i int, mask uint32) call { c.flags, c.flagMask = i, mask; return c }
func withFd(c call, i int) call                 { c.fd = i; return c }
func follow(c call) call                        { c.follow = true; return c }

func rename(d, p, d2, p2, flags int) call {
	return call{kind: kRename, dir: d, path: p, dir2: d2, path2: p2, flags: flags, fd: noArg, band: noArg, watched: noArg}
}

// program assembles the filter: a call of another architecture fails with
// EPERM (it would slip past the numbers below; EPERM as the sandbox's own
// filter says, since the newer filter's errno is the one a tie returns), a listed call is handed to
// the supervisor (only with write flags, for opens), the rest is allowed.
func program() ([]unix.SockFilter, error) {
	ins := []bpf.Instruction{
		bpf.LoadAbsolute{Off: 4, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: auditArch, SkipTrue: 1},
		bpf.RetConstant{Val: unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)},
		bpf.LoadAbsolute{Off: 0, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpGreaterOrEqual, Val: nrLimit, SkipFalse: 1},
		bpf.RetConstant{Val: unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)},
	}
	for nr, c := range calls() {
		body := ruleBody(nr, c)
		ins = append(ins, bpf.JumpIf{Cond: bpf.JumpEqual, Val: uint32(nr), SkipFalse: uint8(len(body))})
		ins = append(ins, body...)
	}
	ins = append(ins, bpf.RetConstant{Val: unix.SECCOMP_RET_ALLOW})
	raw, err := bpf.Assemble(ins)
	if err != nil {
		return nil, fmt.Errorf("journal: assemble the seccomp filter: %w", err)
	}
	out := make([]unix.SockFilter, len(raw))
	for i, r := range raw {
		out[i] = unix.SockFilter{Code: r.Op, Jt: r.Jt, Jf: r.Jf, K: r.K}
	}
	return out, nil
}

// ruleBody decides, once the call number matched, between the supervisor
// and going on.
func ruleBody(nr uintptr, c call) []bpf.Instruction {
	const notify = unix.SECCOMP_RET_USER_NOTIF
	switch {
	case c.kind == kDenied:
		return []bpf.Instruction{bpf.RetConstant{Val: unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)}}
	case nr == unix.SYS_FCNTL:
		w := watchedFd(c.watched)
		return append([]bpf.Instruction{
			bpf.LoadAbsolute{Off: argOff(1), Size: 4},
			bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.F_SETFL, SkipTrue: 2},
			bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.F_DUPFD, SkipTrue: 1},
			bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.F_DUPFD_CLOEXEC, SkipFalse: uint8(len(w) - 1)},
		}, w...)
	case c.watched != noArg:
		return watchedFd(c.watched)
	case c.band != noArg:
		return []bpf.Instruction{
			bpf.LoadAbsolute{Off: argOff(c.band), Size: 4},
			bpf.JumpIf{Cond: bpf.JumpGreaterOrEqual, Val: bandLo, SkipFalse: 2},
			bpf.JumpIf{Cond: bpf.JumpGreaterOrEqual, Val: appendLo, SkipTrue: 1},
			bpf.RetConstant{Val: notify},
			bpf.RetConstant{Val: unix.SECCOMP_RET_ALLOW},
		}
	case c.flagMask != 0:
		return []bpf.Instruction{
			bpf.LoadAbsolute{Off: argOff(c.flags), Size: 4},
			bpf.JumpIf{Cond: bpf.JumpBitsSet, Val: c.flagMask, SkipFalse: 1},
			bpf.RetConstant{Val: notify},
			bpf.RetConstant{Val: unix.SECCOMP_RET_ALLOW},
		}
	}
	return []bpf.Instruction{bpf.RetConstant{Val: notify}}
}

// watchedFd traps when argument i is 0 to 2 or in the bands: where an
// append that kept only its length may be (band.go); it ends in "allow".
func watchedFd(i int) []bpf.Instruction {
	return []bpf.Instruction{
		bpf.LoadAbsolute{Off: argOff(i), Size: 4},
		bpf.JumpIf{Cond: bpf.JumpGreaterOrEqual, Val: 3, SkipFalse: 2},
		bpf.JumpIf{Cond: bpf.JumpGreaterOrEqual, Val: bandLo, SkipFalse: 2},
		bpf.JumpIf{Cond: bpf.JumpGreaterOrEqual, Val: bandHi, SkipTrue: 1},
		bpf.RetConstant{Val: unix.SECCOMP_RET_USER_NOTIF},
		bpf.RetConstant{Val: unix.SECCOMP_RET_ALLOW},
	}
}

// argOff is the offset of argument i's low 32 bits in seccomp_data
// (little-endian on both supported architectures).
func argOff(i int) uint32 { return uint32(16 + 8*i) }

// installFilter sets no_new_privs (so an unprivileged process may filter)
// and installs the filter on the calling thread, returning the listener.
func installFilter() (int, error) {
	f, err := program()
	if err != nil {
		return -1, err
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return -1, fmt.Errorf("journal: set no_new_privs: %w", err)
	}
	prog := unix.SockFprog{Len: uint16(len(f)), Filter: &f[0]}
	fd, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER,
		unix.SECCOMP_FILTER_FLAG_NEW_LISTENER, uintptr(unsafe.Pointer(&prog)))
	if errno != 0 {
		return -1, fmt.Errorf("journal: install the seccomp filter: %w", errno)
	}
	return int(fd), nil
}
