//go:build race

package termmd

// raceSlowdown scales time bounds under the race detector, which slows
// this code several times over.
const raceSlowdown = 5
