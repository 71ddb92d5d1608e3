// Package store is the one writer of a session file (session.md §1 and §6):
// it creates sessions under <cwd>/.tiny-agent/sessions (0700 directories,
// 0600 files, O_EXCL, no symlinks anywhere on the way), opens them by id
// with torn-tail repair and an exclusive flock, and appends each committed
// transaction as one LF-terminated line after the reducer has accepted it.
// An append never re-reads or re-reduces the file, so its cost does not
// grow with the session. A failed or short write is truncated back, so no
// later commit lands behind a partial line.
//
// Data that tiny-go keeps about a session beyond the shared format (which
// must not grow new fact types or header fields) lives in the session's
// sidecar directory; see SidecarDir.
package store
