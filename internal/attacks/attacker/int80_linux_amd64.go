package main

import "syscall"

func int80(nr uintptr) uintptr

// i386 makes getpid through the i386 system call table (int 0x80).
func i386() error {
	r := int64(int80(20)) // getpid in the i386 table
	if r < 0 && r > -4096 {
		return syscall.Errno(-r)
	}
	return nil
}
