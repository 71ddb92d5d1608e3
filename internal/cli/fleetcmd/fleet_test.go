package fleetcmd_test

import (
	"bytes"

	"os/exec"
	"strings"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/cli"
	"github.com/tiny-agent/tiny-go/internal/cli/cmdutil"

	"github.com/tiny-agent/tiny-go/internal/testenv"
)

// run calls tiny-go's Main in-process and returns the exit code and
// outputs.
func run(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = cli.Main(args, bytes.NewReader(nil), &out, &errOut, func(string) string { return "" })
	return code, out.String(), errOut.String()
}

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
		if code != cmdutil.ExitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("tiny-go %s: exit %d, stderr %q; want 2 and %q", strings.Join(tc.args, " "), code, stderr, tc.want)
		}
	}
}

// Help prints through the real binary when tiny-go-fleet is not
// installed, and the install hint is the README's.
func TestFleetHelpWithoutFleet(t *testing.T) {
	bin := testenv.TinyGo(t)
	for _, args := range [][]string{{"worker", "--help"}, {"worker", "-h"}, {"eval", "status", "--help"}} {
		cmd := exec.Command(bin, args...)
		cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir()}
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "Usage:") || !strings.Contains(string(out), "go install ./cmd/tiny-go-fleet") {
			t.Errorf("tiny-go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		for _, line := range strings.Split(string(out), "\n") {
			if len([]rune(line)) > 100 {
				t.Errorf("tiny-go %s: a line of %d columns: %q", strings.Join(args, " "), len([]rune(line)), line)
			}
		}
	}
	cmd := exec.Command(bin, "worker")
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir()}
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "go install ./cmd/tiny-go-fleet in a clone") || strings.Contains(string(out), "@latest") {
		t.Errorf("tiny-go worker without tiny-go-fleet: %v\n%s", err, out)
	}
}
