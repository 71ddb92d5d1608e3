package rewindcmd

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/checkpoint"
)

// TestRewindWords: a preview names branches, tags and HEAD as git's
// porcelain does, lists the files outside .git by path and only counts
// those inside (issue 47: it listed .git/objects/…).
func TestRewindWords(t *testing.T) {
	plan := &checkpoint.Plan{
		Git: []checkpoint.GitAction{
			{Kind: checkpoint.GitHead, From: "ref: refs/heads/feature", To: "ref: refs/heads/main"},
			{Kind: checkpoint.GitRef, Name: "refs/heads/feature", From: "1111111111", To: ""},
			{Kind: checkpoint.GitRef, Name: "refs/tags/v1", From: "", To: "2222222222"},
			{Kind: checkpoint.GitRef, Name: "refs/heads/main", From: "3333333333", To: "4444444444"},
		},
		Actions: []checkpoint.Action{
			{Path: "main.go", Op: checkpoint.OpRestore},
			{Path: "notes.txt", Op: checkpoint.OpDelete},
			{Path: ".git/objects/18/b24e", Op: checkpoint.OpDelete},
			{Path: ".git/index", Op: checkpoint.OpRestore},
		},
	}
	var b bytes.Buffer
	did := WriteWords(context.Background(), &b, t.TempDir(), TurnInfo{N: 2, Prompt: "branch"}, plan, nil)
	got := b.String()
	for _, want := range []string{
		"git: switch back to branch main, remove branch feature, bring back tag v1, put branch main back at 4444444",
		"  restore   main.go\n", "  delete    notes.txt\n", "  and put back 2 of git's own files (/rewind 2 details lists them)\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("preview lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, ".git/") {
		t.Errorf("preview names .git's files:\n%s", got)
	}
	if !strings.HasPrefix(did, "switched back to branch main, removed branch feature, brought back tag v1") {
		t.Errorf("the result's git line %q", did)
	}
}

// TestCollapseDirs: a directory with many paths inside is one line; a
// few are listed each.
func TestCollapseDirs(t *testing.T) {
	paths := []string{"out", "out/b.txt", "nm", "nm/a", "nm/a/1", "nm/a/2", "nm/a/3", "nm/a/4", "z.txt"}
	got := strings.Join(collapseDirs(paths), "|")
	if want := "nm/ (and 5 paths inside)|out|out/b.txt|z.txt"; got != want {
		t.Fatalf("collapseDirs = %q, want %q", got, want)
	}
}
