//go:build linux

package journal

import "golang.org/x/sys/unix"

const (
	auditArch = unix.AUDIT_ARCH_X86_64
	nrLimit   = 0x40000000 // x32 calls: another numbering
	rmdirNr   = unix.SYS_RMDIR
	creatNr   = unix.SYS_CREAT
)

// legacyCalls are amd64's path calls that arm64 has only as *at calls.
func legacyCalls() map[uintptr]call {
	return map[uintptr]call{
		unix.SYS_OPEN:      withFlags(at(kOpen, noArg, 0), 1, writeFlags),
		unix.SYS_CREAT:     at(kOpen, noArg, 0),
		unix.SYS_UNLINK:    at(kRemove, noArg, 0),
		unix.SYS_RMDIR:     at(kRemove, noArg, 0),
		unix.SYS_RENAME:    rename(noArg, 0, noArg, 1, noArg),
		unix.SYS_MKDIR:     at(kCreate, noArg, 0),
		unix.SYS_MKNOD:     at(kCreate, noArg, 0),
		unix.SYS_LINK:      at(kCreate, noArg, 1),
		unix.SYS_SYMLINK:   at(kCreate, noArg, 1),
		unix.SYS_CHMOD:     follow(at(kMeta, noArg, 0)),
		unix.SYS_CHOWN:     follow(at(kMeta, noArg, 0)),
		unix.SYS_LCHOWN:    at(kMeta, noArg, 0),
		unix.SYS_UTIME:     follow(at(kMeta, noArg, 0)),
		unix.SYS_UTIMES:    follow(at(kMeta, noArg, 0)),
		unix.SYS_DUP2:      onWatched(kDup, 0),
		unix.SYS_FUTIMESAT: follow(at(kMeta, 0, 1)),
	}
}
