//go:build !linux

// Package nsinit is Linux's namespace init (nsinit_linux.go); elsewhere
// there are no namespaces and nothing starts it.
package nsinit

// Program is the static init where there is one; no system but Linux
// runs it.
func Program() []byte { return program }
