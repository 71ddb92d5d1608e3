package cli

import (
	"strings"
	"testing"
)

// The fleet's flags are checked here before tiny-go-fleet is looked for.
func TestFleetFlagsOfEval(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"eval", "somewhere", "--blob", "file:///tmp/x"}, "--blob needs --temporal"},
		{[]string{"eval", "somewhere", "--temporal", "127.0.0.1:1", "--parallel", "2"}, "--parallel cannot be used with --temporal"},
		{[]string{"eval", "somewhere", "--temporal", "127.0.0.1:1", "--replay", "rec"}, "--replay cannot be used with --temporal"},
	} {
		code, _, stderr := run(t, tc.args...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("tiny-go %s: exit %d, stderr %q; want 2 and %q", strings.Join(tc.args, " "), code, stderr, tc.want)
		}
	}
}
