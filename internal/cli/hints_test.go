package cli

import (
	"strings"
	"testing"
)

// Errors that tell the fix (issue 20).

func TestUnknownFlagSuggestsTheNearestFlag(t *testing.T) {
	c := newCLI(t, nil)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--idle-timout", "3s", "hi"}, "unknown flag: --idle-timout (did you mean --idle-timeout?)"},
		{[]string{"session", "list", "--jsn"}, "unknown flag: --jsn (did you mean --json?)"},
	} {
		code, _, stderr := c.main("", tc.args...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want %q", tc.args, code, stderr, tc.want)
		}
	}
	// Nothing near: no guess.
	if _, _, stderr := c.main("", "--zzzzzzzzzz"); strings.Contains(stderr, "did you mean") {
		t.Errorf("a guess for a flag nothing is near: %q", stderr)
	}
}

func TestSessionShowOfAnUnknownIDSaysNoSuchSession(t *testing.T) {
	c := newCLI(t, nil)
	code, _, stderr := c.main("", "session", "show", "nope")
	if code != exitUsage || !strings.Contains(stderr, "no session nope in this directory") || strings.Contains(stderr, "cannot read") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	code, _, stderr = c.main("", "session", "show", "0190c3d2-7f3e-7a1b-8c4d-5e6f7a8b9c0d")
	if code != exitUsage || !strings.Contains(stderr, "no session 0190c3d2-7f3e-7a1b-8c4d-5e6f7a8b9c0d in this directory") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
}
