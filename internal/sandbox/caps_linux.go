package sandbox

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/tiny-agent/tiny-go/internal/sandbox/nsinit"
)

// filterWarning names what is lost when the kernel refused the seccomp
// filter (or there is none for this architecture); "" when commands run
// under it.
func (c *containment) filterWarning() string {
	if c == nil || c.noFilter == nil {
		return ""
	}
	return fmt.Sprintf("no seccomp filter for commands (%v): commands may call mount, unshare, bpf, ptrace and the like, held back by their missing capabilities only", c.noFilter)
}

// dropThreadCapabilities is, for the confining thread of a root tiny-go,
// what the init does for a command in namespaces: every capability
// dropped from the bounding set, the ambient and inheritable ones
// cleared, the securebits locked. The thread keeps its own permitted and
// effective capabilities (write and edit run on it), but nothing it
// executes gains any: with SECBIT_NOROOT and an empty bounding set, root
// executes a program as any user would. Commands start from this thread
// when namespaces are refused.
func dropThreadCapabilities() error {
	var errs []error
	if err := unix.Prctl(unix.PR_SET_SECUREBITS, nsinit.Securebits, 0, 0, 0); err != nil {
		errs = append(errs, fmt.Errorf("locking securebits: %w", err))
	}
	for c := 0; c < 64; c++ {
		err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0)
		if err == unix.EINVAL { // past the kernel's last capability
			break
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("emptying the bounding set: %w", err))
			break
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		errs = append(errs, fmt.Errorf("clearing ambient capabilities: %w", err))
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	err := unix.Capget(&hdr, &data[0])
	if err == nil {
		data[0].Inheritable, data[1].Inheritable = 0, 0
		err = unix.Capset(&hdr, &data[0])
	}
	if err != nil {
		errs = append(errs, fmt.Errorf("clearing inheritable capabilities: %w", err))
	}
	return errors.Join(errs...)
}
