// Package testenv tells tests about the build they run in (so timing
// assertions stay strict in normal builds and do not flake under the race
// detector, which slows every goroutine switch and system call), and runs
// the client programs built on SDKs we did not write (NodeClient).
package testenv

import "time"

// raceFactor is how much slower the race detector makes timing-sensitive
// code; the bounds of the contracts are asserted exactly without it.
const raceFactor = 4

// Scale returns d, or d stretched by raceFactor in a race-enabled build.
func Scale(d time.Duration) time.Duration {
	if Race {
		return d * raceFactor
	}
	return d
}
