// Package journal runs a command on the real tree and saves each file's
// pre-image before the command first changes it, so Restore can put the
// tree back. It is the alternative to the overlay transaction measured in
// docs/checkpoints.md ("Pre-image journal: measured against the overlay").
//
// The command runs under a seccomp filter that hands the calls that change
// files (write-opens, truncates, renames, unlinks, mkdir/rmdir, links,
// mknod, chmod/chown/utimes, xattrs) to a supervisor in this process
// (SECCOMP_RET_USER_NOTIF). The supervisor records what the call is about
// to destroy, syncs the record, then lets the call go on
// (SECCOMP_USER_NOTIF_FLAG_CONTINUE). Seccomp notification is no security
// boundary (a racing thread can swap a path after it is read): it is
// bookkeeping for a cooperative command, and containment stays with
// Landlock and namespaces.
//
// Start re-executes the binary (ChildMain) to install the filter; Attach
// supervises a listener installed elsewhere (the sandbox's namespace init:
// sandbox.StartTrapped), with Options that keep it from hidden paths and
// from doing on the command's behalf what the command may not.
//
// Linux on amd64 and arm64 only; elsewhere Start, Attach and Restore
// return ErrNotSupported.
package journal

import "errors"

// ErrNotSupported is returned where the kernel has no seccomp notification.
var ErrNotSupported = errors.New("journal: pre-image journal needs Linux (amd64 or arm64) with seccomp user notification")
