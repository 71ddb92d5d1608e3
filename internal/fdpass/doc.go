// Package fdpass receives a file descriptor another process sends over a
// unix socket (SCM_RIGHTS): the namespace init hands tiny-go its
// seccomp listener and its network proxy's socket this way (Linux).
package fdpass
