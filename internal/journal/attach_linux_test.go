//go:build linux && (amd64 || arm64)

package journal

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// The band and tiny-go's own rmdir follow the kernel's permission check
// for the command's ids: the class it is in, not the most generous one.
func TestCredsAllowLikeTheKernel(t *testing.T) {
	st := func(uid, gid uint32, mode uint32) *unix.Stat_t {
		return &unix.Stat_t{Uid: uid, Gid: gid, Mode: unix.S_IFREG | mode}
	}
	user := creds{fsuid: 1000, fsgid: 1000, groups: []uint32{1000, 27}}
	path := filepath.Join(t.TempDir(), "none") // no ACL to read
	for _, c := range []struct {
		name string
		id   creds
		st   *unix.Stat_t
		bits uint32
		want bool
	}{
		{"owner may write", user, st(1000, 1, 0o600), 0o2, true},
		{"owner without w", user, st(1000, 1, 0o466), 0o2, false}, // the owner's class decides
		{"group member", user, st(5, 27, 0o060), 0o6, true},
		{"group without w", user, st(5, 27, 0o646), 0o2, false},
		{"other", user, st(5, 5, 0o602), 0o2, true},
		{"other read only", user, st(5, 5, 0o604), 0o6, false},
		{"root without capabilities", creds{}, st(1234, 1234, 0o644), 0o2, false},
		{"root's own 0444", creds{}, st(0, 0, 0o444), 0o2, false},
		{"CAP_DAC_OVERRIDE", creds{dacOverride: true}, st(1234, 1234, 0o000), 0o6, true},
	} {
		if got := c.id.allows(path, c.st, c.bits); got != c.want {
			t.Errorf("%s: allows = %v, want %v", c.name, got, c.want)
		}
	}
}

// readCreds reads this process's own ids and capabilities.
func TestReadCreds(t *testing.T) {
	c, err := readCreds(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if c.fsuid != uint32(os.Geteuid()) || c.fsgid != uint32(os.Getegid()) {
		t.Errorf("fsuid %d fsgid %d, want %d %d", c.fsuid, c.fsgid, os.Geteuid(), os.Getegid())
	}
	if want := os.Geteuid() == 0; c.dacOverride != want {
		t.Errorf("dacOverride = %v as uid %d", c.dacOverride, os.Geteuid())
	}
}
