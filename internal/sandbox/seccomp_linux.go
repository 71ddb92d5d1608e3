package sandbox

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// seccompBytes is the filter as the kernel's struct sock_filter array.
func seccompBytes(f []unix.SockFilter) []byte {
	b := make([]byte, 0, 8*len(f))
	for _, ins := range f {
		b = binary.NativeEndian.AppendUint16(b, ins.Code)
		b = append(b, ins.Jt, ins.Jf)
		b = binary.NativeEndian.AppendUint32(b, ins.K)
	}
	return b
}

// maxFilterBytes is what the static init reads of the filter.
const maxFilterBytes = 4096

// seccompFile is the filter in a sealed memfd, for the init to read
// (empty where there is no filter, or when use is false).
func seccompFile(use bool) (*os.File, error) {
	var b []byte
	if use {
		b = seccompBytes(seccompFilter())
	}
	f, err := sealedMemfd("tiny-go-seccomp", b)
	if err != nil {
		return nil, fmt.Errorf("seccomp filter: %w", err)
	}
	return f, nil
}

// sealedSeccompFile is seccompFile for a sealed review's commands.
func sealedSeccompFile() (*os.File, error) {
	f, err := sealedMemfd("tiny-go-seccomp", seccompBytes(sealedFilter()))
	if err != nil {
		return nil, fmt.Errorf("seccomp filter: %w", err)
	}
	return f, nil
}

// installSeccomp loads the filter on the calling thread (no_new_privs
// must be set): what the thread starts inherits it.
func installSeccomp() error {
	f := seccompFilter()
	if f == nil {
		return errors.New("none is built for " + runtime.GOARCH)
	}
	prog := unix.SockFprog{Len: uint16(len(f)), Filter: &f[0]}
	if err := unix.Prctl(unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&prog)), 0, 0); err != nil {
		return fmt.Errorf("the kernel refused it: %w", err)
	}
	return nil
}
