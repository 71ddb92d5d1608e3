package cli

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/approval"
	"github.com/tiny-agent/tiny-go/internal/commands"
)

// TestModesAndCommandsAgree: --help, acp --help and the docs' tables name
// exactly the approval modes and slash commands the code has (issue: they
// disagreed). The source is approval.Modes and commands.Builtins.
func TestModesAndCommandsAgree(t *testing.T) {
	want := approval.ModeNames()
	slices.Sort(want)
	root := newRootCommand(&app{})
	acp, _, err := root.Find([]string{"acp"})
	if err != nil || acp == root {
		t.Fatalf("no acp command: %v", err)
	}
	for name, usage := range map[string]string{
		"--help":     root.Flags().Lookup("approval").Usage,
		"acp --help": acp.Flags().Lookup("approval").Usage,
	} {
		if got := helpModes(usage); !slices.Equal(got, want) {
			t.Errorf("%s names the modes %v, want %v:\n%s", name, got, want, usage)
		}
		for _, m := range approval.Modes {
			if !strings.Contains(usage, string(m.Mode)+": "+m.Description) {
				t.Errorf("%s does not describe %s", name, m.Mode)
			}
		}
	}
	usage := readDoc(t, "usage.md")
	if got := firstCells(t, usage, "<!-- modes -->"); !slices.Equal(got, want) {
		t.Errorf("docs/usage.md's modes table names %v, want %v", got, want)
	}
	if got := configModes(t, readDoc(t, "configuration.md")); !slices.Equal(got, want) {
		t.Errorf("docs/configuration.md's approval row names %v, want %v", got, want)
	}
	var cmds []string
	for _, c := range commands.Builtins {
		cmds = append(cmds, c.Name)
	}
	slices.Sort(cmds)
	if got := firstCells(t, usage, "<!-- commands -->"); !slices.Equal(got, cmds) {
		t.Errorf("docs/usage.md's commands table names %v, want %v", got, cmds)
	}
	if got := firstCells(t, readDoc(t, "keys-and-commands.md"), "<!-- commands -->"); !slices.Equal(got, cmds) {
		t.Errorf("docs/keys-and-commands.md's commands table names %v, want %v", got, cmds)
	}
}

// helpModes are the modes of a flag's "one of a, b or c".
func helpModes(usage string) []string {
	m := regexp.MustCompile(`one of ([a-z]+(?:, [a-z]+)* or [a-z]+)`).FindStringSubmatch(usage)
	if m == nil {
		return nil
	}
	names := strings.Split(strings.Replace(m[1], " or ", ", ", 1), ", ")
	slices.Sort(names)
	return names
}

func readDoc(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("../../docs/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// firstCells are the backticked names of the first column of the table
// after marker, sorted: `x` is x, `/name [arg]` is name, `/skill:<n>` is
// skill:.
func firstCells(t *testing.T, doc, marker string) []string {
	t.Helper()
	_, after, ok := strings.Cut(doc, marker+"\n")
	if !ok {
		t.Fatalf("no %s in the docs", marker)
	}
	var names []string
	for i, line := range strings.Split(after, "\n") {
		if !strings.HasPrefix(line, "|") {
			break
		}
		if i < 2 { // the header and its rule
			continue
		}
		cell := strings.Split(line, "|")[1]
		for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(cell, -1) {
			n := strings.TrimPrefix(strings.Fields(m[1])[0], "/")
			if strings.HasPrefix(n, "skill:") {
				n = "skill:"
			}
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return names
}

// configModes are the backticked values of configuration.md's approval row.
func configModes(t *testing.T, doc string) []string {
	t.Helper()
	for _, line := range strings.Split(doc, "\n") {
		if strings.HasPrefix(line, "| `approval` |") {
			cell, _, _ := strings.Cut(strings.Split(line, "|")[2], "(")
			var names []string
			for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(cell, -1) {
				names = append(names, m[1])
			}
			slices.Sort(names)
			return names
		}
	}
	t.Fatal("no approval row in docs/configuration.md")
	return nil
}
