package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// sexp is one parsed form of a profile: an atom, a string or a list.
type sexp struct {
	atom   string
	str    *string
	list   []sexp
	isList bool
}

// parseSBPL reads a profile as TinyScheme does, for what a profile of ours
// may hold: lists, symbols, numbers, strings with \" and \\ escapes, and
// ; comments. Anything else is an error.
func parseSBPL(src string) ([]sexp, error) {
	var stack [][]sexp
	var top []sexp
	push := func(e sexp) {
		if len(stack) == 0 {
			top = append(top, e)
		} else {
			stack[len(stack)-1] = append(stack[len(stack)-1], e)
		}
	}
	for i := 0; i < len(src); {
		switch c := src[i]; {
		case c == ';':
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case c == ' ' || c == '\n' || c == '\t':
			i++
		case c == '(':
			stack = append(stack, []sexp{})
			i++
		case c == ')':
			if len(stack) == 0 {
				return nil, fmt.Errorf("unbalanced ) at %d", i)
			}
			l := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			push(sexp{list: l, isList: true})
			i++
		case c == '"':
			var b strings.Builder
			i++
			for ; ; i++ {
				if i >= len(src) {
					return nil, errors.New("unterminated string")
				}
				if src[i] == '\\' {
					if i+1 >= len(src) || (src[i+1] != '"' && src[i+1] != '\\') {
						return nil, fmt.Errorf("unknown escape at %d", i)
					}
					i++
				} else if src[i] == '"' {
					break
				} else if src[i] < 0x20 {
					return nil, fmt.Errorf("raw control character at %d", i)
				}
				b.WriteByte(src[i])
			}
			i++
			s := b.String()
			push(sexp{str: &s})
		default:
			j := i
			for j < len(src) && !strings.ContainsRune(" \n\t()\";", rune(src[j])) {
				j++
			}
			push(sexp{atom: src[i:j]})
			i = j
		}
	}
	if len(stack) != 0 {
		return nil, errors.New("unbalanced (")
	}
	return top, nil
}

// knownRule checks one top-level form against the operations and filters
// a tiny-go profile uses.
func knownRule(e sexp) error {
	if !e.isList || len(e.list) == 0 {
		return errors.New("a top-level form is not a list")
	}
	head := e.list[0].atom
	if head == "version" {
		if len(e.list) != 2 || e.list[1].atom != "1" {
			return errors.New("(version 1) expected")
		}
		return nil
	}
	if head != "allow" && head != "deny" {
		return fmt.Errorf("unknown action %q", head)
	}
	if len(e.list) < 2 {
		return errors.New("no operation")
	}
	op := e.list[1].atom
	if !slices.Contains([]string{"default", "file-read*", "file-write*", "network-outbound", "network-bind"}, op) {
		return fmt.Errorf("unknown operation %q", op)
	}
	for _, f := range e.list[2:] {
		if err := knownFilter(f); err != nil {
			return fmt.Errorf("%s: %w", op, err)
		}
	}
	return nil
}

func knownFilter(f sexp) error {
	if !f.isList || len(f.list) < 2 {
		return errors.New("a filter is not a list")
	}
	switch f.list[0].atom {
	case "subpath", "literal":
		if len(f.list) != 2 || f.list[1].str == nil || !strings.HasPrefix(*f.list[1].str, "/") {
			return errors.New("a path filter takes one absolute path string")
		}
	case "remote", "local":
		if len(f.list) != 3 || f.list[1].atom != "ip" || f.list[2].str == nil {
			return errors.New(`(remote ip "host:port") expected`)
		}
	case "require-all", "require-not":
		for _, g := range f.list[1:] {
			if err := knownFilter(g); err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("unknown filter %q", f.list[0].atom)
	}
	return nil
}

// matches evaluates a path filter for path as Seatbelt does: subpath
// matches the path and what is below it, by whole components.
func matches(f sexp, path string) bool {
	switch f.list[0].atom {
	case "subpath":
		return underAny(path, []string{*f.list[1].str})
	case "literal":
		return path == *f.list[1].str
	case "require-all":
		for _, g := range f.list[1:] {
			if !matches(g, path) {
				return false
			}
		}
		return true
	case "require-not":
		return !matches(f.list[1], path)
	}
	return false
}

// writable says whether the profile lets a command write path: the last
// rule that matches decides.
func writable(forms []sexp, path string) bool { return allowed(forms, "file-write*", path) }

// readable is writable for reading.
func readable(forms []sexp, path string) bool { return allowed(forms, "file-read*", path) }

func allowed(forms []sexp, operation, path string) bool {
	ok := false
	for _, e := range forms {
		if len(e.list) < 2 || e.list[0].atom == "version" {
			continue
		}
		op := e.list[1].atom
		if op != "default" && op != operation {
			continue
		}
		applies := len(e.list) == 2
		for _, f := range e.list[2:] {
			applies = applies || matches(f, path)
		}
		if applies {
			ok = e.list[0].atom == "allow"
		}
	}
	return ok
}

func mustProfile(t *testing.T, p seatbeltPolicy) []sexp {
	t.Helper()
	src, err := seatbeltProfile(p)
	if err != nil {
		t.Fatal(err)
	}
	forms, err := parseSBPL(src)
	if err != nil {
		t.Fatalf("%v in:\n%s", err, src)
	}
	for _, e := range forms {
		if err := knownRule(e); err != nil {
			t.Fatalf("%v in:\n%s", err, src)
		}
	}
	return forms
}

func TestSeatbeltProfileWritesOnlyTheRoots(t *testing.T) {
	roots := []string{
		"/Users/ana/my project",
		`/Users/ana/say "hi"`,
		`/Users/ana/back\slash`,
		"/Users/ana/Développement/日本語",
		"/private/var/folders/xy/T",
		"/Users/ana/paren) (allow default",
	}
	state := "/Users/ana/my project/.tiny-agent"
	forms := mustProfile(t, seatbeltPolicy{Writable: roots, ReadOnly: []string{state}})
	for _, r := range roots {
		for _, p := range []string{r, r + "/a.txt", r + "/d/e/f"} {
			if !writable(forms, p) {
				t.Errorf("%q is not writable", p)
			}
		}
	}
	for _, p := range []string{
		"/", "/Users/ana", "/Users/ana/my", "/Users/ana/my project2", "/Users/ana/my projec",
		"/etc/passwd", "/Users/ana/.ssh/authorized_keys", "/private/var/folders/xy",
		state, state + "/sessions/x.jsonl", `/Users/ana/say "hi"x`, "/Users/ana/paren)",
	} {
		if writable(forms, p) {
			t.Errorf("%q is writable", p)
		}
	}
	for _, d := range []string{"/dev/null", "/dev/tty", "/dev/fd/1"} {
		if !writable(forms, d) {
			t.Errorf("device %s is not writable", d)
		}
	}
}

// TestSeatbeltProfileRulesAreExact reads the allow rule back: every root,
// each once, and nothing but the roots and the devices.
func TestSeatbeltProfileRulesAreExact(t *testing.T) {
	roots := []string{"/a b", "/c", "/Users/ü/\"q\""}
	forms := mustProfile(t, seatbeltPolicy{Writable: roots})
	var named []string
	allows := 0
	for _, e := range forms {
		if e.list[0].atom != "allow" || e.list[1].atom != "file-write*" {
			continue
		}
		allows++
		for _, f := range e.list[2:] {
			named = append(named, f.list[0].atom+" "+*f.list[1].str)
		}
	}
	var want []string
	for _, r := range roots {
		want = append(want, "subpath "+r)
	}
	for _, d := range seatbeltDevices {
		want = append(want, "literal "+d)
	}
	for _, d := range seatbeltDeviceDirs {
		want = append(want, "subpath "+d)
	}
	if allows != 1 || !slices.Equal(named, want) {
		t.Fatalf("allow file-write* names %q (%d rules), want %q", named, allows, want)
	}
}

func TestSeatbeltProfileModes(t *testing.T) {
	src, err := seatbeltProfile(seatbeltPolicy{AllWrites: true, NetworkOff: true})
	if err != nil {
		t.Fatal(err)
	}
	forms := mustProfile(t, seatbeltPolicy{AllWrites: true, NetworkOff: true})
	if !writable(forms, "/etc/hosts") || !strings.Contains(src, "(deny network-outbound") || !strings.Contains(src, "(deny network-bind") {
		t.Fatalf("--sandbox off --network off:\n%s", src)
	}
	src, _ = seatbeltProfile(seatbeltPolicy{Writable: []string{"/w"}})
	if strings.Contains(src, "network") {
		t.Fatalf("network on, yet the profile names it:\n%s", src)
	}
	// Read-only mode with a missing scratch root: only the devices.
	forms = mustProfile(t, seatbeltPolicy{})
	if writable(forms, "/tmp/x") || !writable(forms, "/dev/null") {
		t.Fatal("no roots, yet something but the devices is writable")
	}
}

func TestSeatbeltProfileRefusesUnnameablePaths(t *testing.T) {
	for _, p := range []string{"relative/dir", "/new\nline", "/tab\there", "/del\x7f"} {
		if _, err := seatbeltProfile(seatbeltPolicy{Writable: []string{p}}); err == nil {
			t.Errorf("%q was accepted", p)
		}
	}
}

// The validator itself must catch what it is there to catch.
func TestParseSBPLRejectsBrokenProfiles(t *testing.T) {
	for _, src := range []string{
		`(allow file-write* (subpath "/a")`,
		`(allow file-write* (subpath "/a")))`,
		`(allow file-write* (subpath "/a"b"))`,
		`(allow file-write* (subpath "/a\q"))`,
		`(allow file-write* (subpath "/a`,
	} {
		forms, err := parseSBPL(src)
		if err == nil {
			for _, e := range forms {
				err = errors.Join(err, knownRule(e))
			}
		}
		if err == nil {
			t.Errorf("accepted %s", src)
		}
	}
	if err := knownRule(sexp{isList: true, list: []sexp{{atom: "allow"}, {atom: "process-exec"}}}); err == nil {
		t.Error("an operation the generator never writes was accepted")
	}
}

// macOS's roots add what its tools write there: /tmp beside TMPDIR (which
// is under /var/folders) and ~/Library/Caches (Go's build cache).
func TestDarwinWritableRoots(t *testing.T) {
	defer func(g string) { goos = g }(goos)
	goos = "darwin"
	home, tmp, work := t.TempDir(), t.TempDir(), t.TempDir()
	caches := filepath.Join(home, "Library", "Caches")
	if err := os.MkdirAll(caches, 0o755); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"HOME": home, "TMPDIR": tmp, "PATH": ""}
	getenv := func(k string) string { return env[k] }
	roots := writableRoots(Policy{Mode: Workspace, WorkDir: work, Getenv: getenv})
	realTmp, _ := filepath.EvalSymlinks("/tmp")
	for _, want := range []string{caches, realTmp, work} {
		if !underAny(want, roots) {
			t.Errorf("%s is not under the roots %q", want, roots)
		}
	}
	plan := writableRoots(Policy{Mode: ReadOnly, WorkDir: work, Scratch: tmp, Getenv: getenv})
	if len(plan) != 1 || plan[0] != tmp {
		t.Errorf("plan mode's roots are %q, want only the scratch %s", plan, tmp)
	}
}

// The state key's folder is neither readable nor writable, even under a
// writable root; the rest stays readable.
func TestSeatbeltProfileHidesTheKey(t *testing.T) {
	key := "/Users/ana/.local/state/tiny-go"
	forms := mustProfile(t, seatbeltPolicy{Writable: []string{"/Users/ana"}, Hidden: []string{key}})
	for _, p := range []string{key, key + "/key", key + "/sealed/x"} {
		if readable(forms, p) || writable(forms, p) {
			t.Errorf("%s is reachable", p)
		}
	}
	for _, p := range []string{"/Users/ana/.local/state/tiny-go2", "/Users/ana/src/a.go", "/etc/hosts"} {
		if !readable(forms, p) {
			t.Errorf("%s is not readable", p)
		}
	}
	if !writable(forms, "/Users/ana/src/a.go") {
		t.Error("the root is not writable")
	}
	if _, err := seatbeltProfile(seatbeltPolicy{Hidden: []string{"relative"}}); err == nil {
		t.Error("a relative hidden path was accepted")
	}
}
