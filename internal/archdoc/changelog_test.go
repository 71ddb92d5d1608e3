package archdoc

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// internalWords are the marks of notes written for the developers: issue
// numbers and spec section references.
var internalWords = regexp.MustCompile(`(?i)#[0-9]+|§|\bissue\b|\.md §|runtime\.md|cli\.md`)

// TestChangelogInUsersWords: the README is for a newcomer and points to
// CHANGELOG.md, which says what changed in a user's words.
func TestChangelogInUsersWords(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(readme), "Release notes") || !strings.Contains(string(readme), "(CHANGELOG.md)") {
		t.Error("README.md carries release notes, or does not link CHANGELOG.md")
	}
	changelog, err := os.ReadFile("../../CHANGELOG.md")
	if err != nil {
		t.Fatal(err)
	}
	for i, line := range strings.Split(string(changelog), "\n") {
		if w := internalWords.FindString(line); w != "" {
			t.Errorf("CHANGELOG.md:%d: %q is not a user's word: %s", i+1, w, line)
		}
	}
}
