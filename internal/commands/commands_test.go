package commands

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func write(t *testing.T, dir, name, content string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLoadPrecedenceAndProblems(t *testing.T) {
	cwd, home := t.TempDir(), t.TempDir()
	dirs := Dirs(cwd, home)
	write(t, dirs[0], "review.md", "---\ndescription: Review the diff\nallowed-tools: Bash(git diff:*)\n---\nReview $ARGUMENTS carefully.\n")
	write(t, dirs[1], "review.md", "the .claude copy loses to the project's own")
	write(t, dirs[1], "fix.md", "Fix issue #$1 in $2.")
	write(t, dirs[2], "mine.md", "# Say hello\nHello from the user directory.")
	write(t, dirs[2], "help.md", "shadows a built-in")
	write(t, dirs[2], "broken.md", "---\ndescription: never closed\nbody")
	write(t, dirs[2], "bad name.md", "x")
	write(t, dirs[2], "notes.txt", "not a command")

	cmds, problems := Load(dirs...)
	var names []string
	for _, c := range cmds {
		names = append(names, c.Name)
	}
	if got := strings.Join(names, " "); got != "fix mine review" {
		t.Fatalf("loaded %q", got)
	}
	review, _ := Find(cmds, "review")
	if review.Description != "Review the diff" || review.Path != filepath.Join(dirs[0], "review.md") {
		t.Fatalf("review: %+v", review)
	}
	if mine, _ := Find(cmds, "mine"); mine.Description != "Say hello" {
		t.Fatalf("description from the first line: %q", mine.Description)
	}
	all := strings.Join(problems, "\n")
	for _, want := range []string{
		"help.md: /help is a built-in command and cannot be replaced; rename the file",
		"broken.md: front matter starts with --- but never ends",
		`"bad name" is not a command name`,
	} {
		if !strings.Contains(all, want) {
			t.Errorf("problems lack %q:\n%s", want, all)
		}
	}
	if len(problems) != 3 {
		t.Errorf("%d problems, want 3:\n%s", len(problems), all)
	}
}

func TestExpand(t *testing.T) {
	for _, tc := range []struct{ body, args, want string }{
		{"Review $ARGUMENTS now.", "the parser", "Review the parser now."},
		{"Fix #$1 in $2 ($3)", `42 "cmd/main.go"`, "Fix #42 in cmd/main.go ()"},
		{"Plain text.", "extra words", "Plain text.\n\nextra words"},
		{"Plain text.", "", "Plain text."},
		{"Costs $5 and $$", "", "Costs  and $$"},
		{"$ARGUMENTS and $1", "a b", "a b and a"},
	} {
		if got := (Command{Body: tc.body}).Expand(tc.args); got != tc.want {
			t.Errorf("Expand(%q, %q) = %q, want %q", tc.body, tc.args, got, tc.want)
		}
	}
}

func TestParseRefusals(t *testing.T) {
	for _, tc := range []struct{ data, want string }{
		{"\x00\x01binary", "binary"},
		{"\xff\xfe", "not UTF-8"},
		{"---\ndescription: x\n---\n", "no text"},
		{"---\nthis is not a key\n---\nbody", `is not "key: value"`},
		{"---\n---junk\nbody", "text after the closing ---"},
	} {
		_, err := Parse("x", []byte(tc.data))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q): %v, want %q", tc.data, err, tc.want)
		}
	}
	c, err := Parse("x", []byte("---\n---\nbody"))
	if err != nil || c.Body != "body" {
		t.Errorf("empty front matter: %+v %v", c, err)
	}
}

func TestMatch(t *testing.T) {
	got := Match(Builtins, "re")
	if len(got) < 2 || got[0].Name != "resume" || got[1].Name != "rewind" {
		t.Fatalf("Match re: %+v", got)
	}
	// "contains" matches come after the prefix ones.
	if got := Match(Builtins, "it"); len(got) != 2 || got[0].Name != "exit" || got[1].Name != "quit" {
		t.Fatalf("Match it: %+v", got)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("---\ndescription: d\n---\nbody $1 $ARGUMENTS"))
	f.Add([]byte("---\n---\n"))
	f.Add([]byte("plain"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse("x", data)
		if err != nil {
			return
		}
		if strings.TrimSpace(c.Body) == "" || strings.Contains(c.Description, "\n") {
			t.Fatalf("parsed %q into %+v", data, c)
		}
		_ = c.Expand("a 'b c' \"d")
	})
}
