//go:build !linux

// The attacker's system calls are Linux's: elsewhere it has nothing to try.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "attacker: Linux only")
	os.Exit(2)
}
