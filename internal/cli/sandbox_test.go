package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/providertest"
	"github.com/tiny-agent/tiny-go/internal/sandbox"
)

// The sandbox flags, end to end: by default a bash command cannot write
// outside the working directory, --writable adds a root, --sandbox off
// lifts it; bad values are usage errors.
func TestSandboxFlags(t *testing.T) {
	if sandbox.ABI() == 0 {
		t.Skip("this kernel has no Landlock")
	}
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	work, outside, tmp := filepath.Join(base, "work"), filepath.Join(base, "outside"), filepath.Join(base, "tmp")
	for _, d := range []string{work, outside, tmp} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	target := filepath.Join(outside, "f")
	for _, tc := range []struct {
		args  []string
		wrote bool
	}{
		{nil, false},
		{[]string{"--sandbox", "read-only"}, false},
		{[]string{"--writable", outside}, true},
		{[]string{"--sandbox", "off"}, true},
	} {
		os.Remove(target)
		srv := providertest.New(t, bashCall(t, "echo x > "+target), providertest.Reply{Text: "done"})
		c := newCLI(t, srv)
		c.dir = work
		c.env["TMPDIR"] = tmp // so that the real /tmp, where base is, is no root
		code, _, stderr := c.main("", append(tc.args, "write it")...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", tc.args, code, stderr)
		}
		if _, err := os.Stat(target); (err == nil) != tc.wrote {
			t.Errorf("%v: wrote=%v, want %v", tc.args, err == nil, tc.wrote)
		}
		for _, f := range c.sessions() {
			os.Remove(f)
		}
	}
	for _, args := range [][]string{{"--sandbox", "strict"}, {"--network", "none"}, {"--writable", filepath.Join(base, "missing")}, {"--sandbox", "off", "--writable", outside}} {
		c := newCLI(t, nil)
		code, _, stderr := c.main("", append(args, "hello")...)
		if code != 2 || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q; want one usage error line", args, code, stderr)
		}
	}
}
