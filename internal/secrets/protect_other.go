//go:build !linux

package secrets

// ProtectMemory does nothing where there is no /proc: macOS lets a process
// read another's memory only with the debugging rights (task_for_pid) that
// commands lack, and the Seatbelt profile lets them look only at processes
// of their own sandbox.
func ProtectMemory() error { return nil }
