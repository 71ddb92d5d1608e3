package sandbox

import (
	"fmt"
	"strings"
)

// seatbeltPolicy is what a macOS Seatbelt profile (sandbox-exec -p) holds
// a command to. As Landlock does on Linux, it restricts writes and the
// network only: a command may read and run anything.
type seatbeltPolicy struct {
	// Writable are the roots a command may write under: absolute, with
	// symlinks resolved (Seatbelt sees /private/tmp, never /tmp).
	Writable []string
	// ReadOnly are directories that stay read-only even under a writable
	// root (.tiny-agent: sessions, checkpoints, approvals).
	ReadOnly []string
	// AllWrites leaves writes unrestricted (--sandbox off --network off).
	AllWrites bool
	// NetworkOff denies IP sockets: connecting and binding, TCP and UDP.
	NetworkOff bool
	// Hidden are directories a command may neither read nor write
	// (tiny-go's state key), whatever else allows it.
	Hidden []string
}

// seatbeltDevices stay writable in every mode: shells and tools write to
// them as a matter of course.
var seatbeltDevices = []string{"/dev/null", "/dev/zero", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/dtracehelper"}

// seatbeltDeviceDirs are device trees written like the devices above
// (/dev/stdout is /dev/fd/1).
var seatbeltDeviceDirs = []string{"/dev/fd"}

// seatbeltProfile writes p in the Sandbox Profile Language. Everything is
// allowed, then every write is denied, then writes under the roots are
// allowed again: Seatbelt applies the last rule that matches, so nothing
// but the roots and the devices can be written. A read-only directory is
// cut out of the root's rule itself (require-not), so it holds whatever
// the order. Paths are string literals, never parameters, so the profile
// alone says what a command may do.
func seatbeltProfile(p seatbeltPolicy) (string, error) {
	var b strings.Builder
	b.WriteString("(version 1)\n")
	b.WriteString("; tiny-go: one command's sandbox. It may read and run anything.\n")
	b.WriteString("(allow default)\n")
	if !p.AllWrites {
		b.WriteString("; Writes only under the writable roots and to the devices.\n")
		b.WriteString("(deny file-write*)\n")
		b.WriteString("(allow file-write*")
		for _, root := range p.Writable {
			rule, err := seatbeltRoot(root, p.ReadOnly)
			if err != nil {
				return "", err
			}
			b.WriteString("\n  " + rule)
		}
		for _, d := range seatbeltDevices {
			b.WriteString("\n  (literal " + sbplString(d) + ")")
		}
		for _, d := range seatbeltDeviceDirs {
			b.WriteString("\n  (subpath " + sbplString(d) + ")")
		}
		b.WriteString(")\n")
	}
	for _, h := range p.Hidden {
		if err := sbplPath(h); err != nil {
			return "", err
		}
		// Last, so no allow rule above lets it through.
		b.WriteString("; tiny-go's state key: out of a command's reach.\n")
		b.WriteString("(deny file-read* (subpath " + sbplString(h) + "))\n")
		b.WriteString("(deny file-write* (subpath " + sbplString(h) + "))\n")
	}
	if p.NetworkOff {
		b.WriteString("; --network off: no IP socket may connect or listen.\n")
		b.WriteString("(deny network-outbound (remote ip \"*:*\"))\n")
		b.WriteString("(deny network-bind (local ip \"*:*\"))\n")
	}
	return b.String(), nil
}

// seatbeltRoot is the filter of one writable root: the root, without the
// read-only directories inside it.
func seatbeltRoot(root string, readOnly []string) (string, error) {
	if err := sbplPath(root); err != nil {
		return "", err
	}
	var cut []string
	for _, ro := range readOnly {
		if err := sbplPath(ro); err != nil {
			return "", err
		}
		if ro != root && underAny(ro, []string{root}) {
			cut = append(cut, "(require-not (subpath "+sbplString(ro)+"))")
		}
	}
	rule := "(subpath " + sbplString(root) + ")"
	if len(cut) == 0 {
		return rule, nil
	}
	return "(require-all " + rule + " " + strings.Join(cut, " ") + ")", nil
}

// sbplPath refuses what a profile cannot name: a relative path, or one with
// a control character (no escape of the profile's reader is relied on but
// the backslash's).
func sbplPath(path string) error {
	if !strings.HasPrefix(path, "/") {
		return fmt.Errorf("sandbox: %q is not an absolute path", path)
	}
	for _, r := range path {
		if r < 0x20 || r == 0x7f {
			return fmt.Errorf("sandbox: the macOS sandbox cannot name %q (a control character in the path); move the directory or use --sandbox off", path)
		}
	}
	return nil
}

// sbplString quotes s as a profile string literal: a backslash before each
// backslash and double quote; any other byte, UTF-8 included, stands for
// itself.
func sbplString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		if s[i] == '"' || s[i] == '\\' {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	b.WriteByte('"')
	return b.String()
}
