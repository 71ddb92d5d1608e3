//go:build linux

package journal

import "golang.org/x/sys/unix"

const (
	auditArch = unix.AUDIT_ARCH_AARCH64
	nrLimit   = 0x40000000
	rmdirNr   = ^uintptr(0)
	creatNr   = ^uintptr(0) // arm64 has no creat
)

// legacyCalls: arm64 has only the *at calls.
func legacyCalls() map[uintptr]call { return nil }
