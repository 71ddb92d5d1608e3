//go:build linux && !amd64 && !arm64

package sandbox

import "golang.org/x/sys/unix"

// seccompFilter: no filter is built for other architectures yet, and
// commands there run without one (docs/containment.md).
func seccompFilter() []unix.SockFilter { return nil }

func sealedFilter() []unix.SockFilter { return nil }
