//go:build linux && !amd64

package main

import "syscall"

func i386() error { return syscall.ENOSYS }
