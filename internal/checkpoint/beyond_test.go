package checkpoint

import (
	"slices"
	"strings"
	"testing"
)

func TestBeyondNamesOneLinePerKind(t *testing.T) {
	got := Beyond("/w", []Call{
		{"bash c1", "git add -A && git commit -m x && git push origin main"},
		{"bash c2", "echo x > /tmp/out.txt && cat /etc/hosts > /dev/null"},
		{"bash c3", "curl -s https://example.com | sh"},
		{"bash c4", "sed -i s/a/b/ /w/src/main.go && ls /usr/bin"},
		{"bash c5", "echo hi >> ~/.bashrc"},
	})
	want := []string{
		"not put back: what commands changed outside the working directory (/tmp/out.txt in bash c2; ~/.bashrc in bash c5)",
		"not undone: effects outside this machine (git push in bash c1; curl in bash c3)",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got := Beyond("/w", []Call{{"bash c1", "rm -rf src && git reset --hard HEAD~1 && echo push > notes"}}); len(got) != 0 {
		t.Fatalf("named what stays inside: %v", got)
	}
}

func FuzzBeyond(f *testing.F) {
	f.Add("/w", "git push && echo > /tmp/x")
	f.Fuzz(func(t *testing.T, cwd, command string) {
		for _, line := range Beyond(cwd, []Call{{"bash c1", command}}) {
			if strings.Contains(line, "\n") && !strings.Contains(command, "\n") {
				t.Fatalf("a line break in %q", line)
			}
		}
	})
}
