package sandbox

import "golang.org/x/sys/unix"

const (
	auditArch = unix.AUDIT_ARCH_X86_64
	// x32Bit marks the x32 ABI's numbers, which reach the same kernel
	// code under other numbers.
	x32Bit  = 0x40000000
	mknodNr = unix.SYS_MKNOD
)

// deniedArch are the amd64 calls that other architectures do not have.
var deniedArch = []uintptr{
	unix.SYS_IOPL, unix.SYS_IOPERM, unix.SYS_USELIB, unix.SYS_USTAT, unix.SYS_SYSFS,
	unix.SYS__SYSCTL, unix.SYS_CREATE_MODULE, unix.SYS_GET_KERNEL_SYMS, unix.SYS_QUERY_MODULE,
}
