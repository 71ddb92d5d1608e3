//go:build !race

package testenv

// Race is true in a build with the race detector.
const Race = false
