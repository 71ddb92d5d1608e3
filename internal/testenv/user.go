package testenv

import (
	"os"
	"os/exec"
	"syscall"
)

// UserUID is the unprivileged user the tests run tiny-go as when they
// run as root (cloudsdk on the CI machine; the number is all the kernel
// needs): its gid is the same number.
const UserUID = 1000

// Unprivileged is the user of a test's unprivileged pass: UserUID when
// the tests run as root, else whoever runs them.
func Unprivileged() int {
	if uid := os.Geteuid(); uid != 0 {
		return uid
	}
	return UserUID
}

// AsUser makes cmd run as uid, with gid uid and no supplementary group,
// when uid is not this process's.
func AsUser(cmd *exec.Cmd, uid int) {
	if uid == os.Geteuid() {
		return
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid), Groups: []uint32{}}
}
