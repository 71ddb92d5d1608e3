//go:build !race

package termmd

// raceSlowdown scales time bounds under the race detector (none here).
const raceSlowdown = 1
