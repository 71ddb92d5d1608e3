package cli

import (
	"slices"
	"strings"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/cli/cmdutil"
)

// FuzzResumeValues: the rewrite of --resume ID never panics, is
// idempotent, leaves everything after -- alone, and changes nothing but
// the words of a --resume (or -r) and its value.
func FuzzResumeValues(f *testing.F) {
	for _, s := range []string{
		"-p\x00--resume\x00ID\x00--output-format\x00json\x00x",
		"-pr\x00ID\x00x", "-r\x00--model\x00m", "--model\x00-r\x00x", "-r\x00--\x00-r\x00x",
		"--resume=ID\x00x", "x\x00-c\x00-r", "--cwd\x00--resume\x00x", "-r\x00\x00x", "--\x00--resume\x00x",
	} {
		f.Add(s)
	}
	fl := newRootCommand(&app{}).Flags()
	f.Fuzz(func(t *testing.T, joined string) {
		args := strings.Split(joined, "\x00")
		out := resumeValues(fl, args)
		if again := resumeValues(fl, out); !slices.Equal(again, out) {
			t.Fatalf("not idempotent: %q -> %q -> %q", args, out, again)
		}
		if i := slices.Index(args, "--"); i >= 0 {
			j := slices.Index(out, "--")
			if j < 0 || !slices.Equal(out[j+1:], args[i+1:]) {
				t.Fatalf("the words after -- changed: %q -> %q", args, out)
			}
		}
		// Every word comes from the input: as it was, as a --resume's
		// value, or as a cluster without its r; a line without -r or
		// --resume is left as it is.
		if len(out) > len(args) {
			t.Fatalf("%q -> %q: longer", args, out)
		}
		for _, s := range out {
			v, merged := strings.CutPrefix(s, "--resume=")
			if !slices.Contains(args, s) && !(merged && slices.Contains(args, v)) && !slices.Contains(args, s+"r") {
				t.Fatalf("%q -> %q: %q comes from nowhere", args, out, s)
			}
		}
		resume := slices.ContainsFunc(args, func(s string) bool {
			return s == "--resume" || (strings.HasPrefix(s, "-") && !strings.HasPrefix(s, "--") && strings.HasSuffix(s, "r"))
		})
		if !resume && !slices.Equal(out, args) {
			t.Fatalf("%q -> %q without --resume", args, out)
		}
	})
}

func TestResumeValues(t *testing.T) {
	fl := newRootCommand(&app{}).Flags()
	for in, want := range map[string]string{
		"-p --resume ID --output-format json x": "-p --resume=ID --output-format json x",
		"-r ID x":                               "--resume=ID x",
		"-pr ID x":                              "-p --resume=ID x",
		"--resume":                              "--resume",
		"--resume -p x":                         "--resume -p x",
		"--model -r x":                          "--model -r x", // -r is --model's value
		"--resume=ID x":                         "--resume=ID x",
		"x -- -r ID":                            "x -- -r ID",
		"-c x":                                  "-c x",
	} {
		if got := strings.Join(resumeValues(fl, strings.Fields(in)), " "); got != want {
			t.Errorf("%s -> %s, want %s", in, got, want)
		}
	}
	// A subcommand's command line is not touched.
	root := newRootCommand(&app{})
	if got := claudeArgs(root, []string{"session", "list", "-r", "x"}); strings.Join(got, " ") != "session list -r x" {
		t.Errorf("session list -r x -> %q", got)
	}
	// run --temporal's flags are tiny-go-fleet's.
	for in, want := range map[string]string{
		"--cwd d run --temporal h:1 --blob b x": "--cwd d -- run --temporal h:1 --blob b x",
		"run --temporal=h:1 x":                  "-- run --temporal=h:1 x",
		"run the tests -r ID":                   "run the tests --resume=ID",
		"--model run --temporal h:1":            "--model run --temporal h:1",
	} {
		if got := strings.Join(claudeArgs(root, strings.Fields(in)), " "); got != want {
			t.Errorf("%s -> %s, want %s", in, got, want)
		}
	}
}

// `tiny-go run --temporal ...` still reaches tiny-go-fleet with its flags
// now that flags may follow the prompt.
func TestFleetRunKeepsItsFlags(t *testing.T) {
	code, _, stderr := run(t, "run", "--temporal", "127.0.0.1:1", "--blob", "file:///x", "go")
	if code != cmdutil.ExitFailed || strings.Contains(stderr, "unknown flag") || !strings.Contains(stderr, "tiny-go-fleet is not installed") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
}
