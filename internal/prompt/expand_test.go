package prompt

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

func TestExpandSkill(t *testing.T) {
	dir := t.TempDir()
	text := skillText("pdf", "PDFs")
	path := writeFile(t, filepath.Join(dir, "SKILL.md"), text)
	skills := []Skill{{Name: "pdf", Description: "PDFs", Path: path}}

	tests := []struct {
		in, want string
	}{
		{"/skill:pdf merge a.pdf and b.pdf", text + "\n\nUser: merge a.pdf and b.pdf"},
		{"/skill:pdf   spaced out  \n", text + "\n\nUser: spaced out"},
		{"/skill:pdf\tline one\nline two", text + "\n\nUser: line one\nline two"},
		{"/skill:pdf", text},
		{"/skill:pdf   ", text},
	}
	for _, tt := range tests {
		got, ok, err := ExpandSkill(tt.in, skills)
		if err != nil || !ok || got != tt.want {
			t.Errorf("ExpandSkill(%q) = %q, %v, %v; want %q", tt.in, got, ok, err, tt.want)
		}
	}
}

func TestExpandSkillNotACommand(t *testing.T) {
	for _, in := range []string{"hello", " /skill:pdf", "/skills:pdf", "/compact", ""} {
		got, ok, err := ExpandSkill(in, nil)
		if ok || err != nil || got != "" {
			t.Errorf("ExpandSkill(%q) = %q, %v, %v; want not a command", in, got, ok, err)
		}
	}
}

func TestExpandSkillUnknown(t *testing.T) {
	_, ok, err := ExpandSkill("/skill:nope do it", []Skill{{Name: "pdf", Path: "/nonexistent"}})
	if !ok || err == nil || err.Error() != "Unknown skill: nope" {
		t.Fatalf("ok=%v err=%v; want Unknown skill: nope", ok, err)
	}
	var unknown *UnknownSkillError
	if !errors.As(err, &unknown) || unknown.Name != "nope" {
		t.Fatalf("err %T is not an UnknownSkillError for nope", err)
	}
	if _, ok, err := ExpandSkill("/skill:", nil); !ok || err == nil {
		t.Fatalf("empty name: ok=%v err=%v", ok, err)
	}
}

func TestExpandSkillFileErrors(t *testing.T) {
	dir := t.TempDir()
	missing := []Skill{{Name: "gone", Path: filepath.Join(dir, "gone.md")}}
	if _, ok, err := ExpandSkill("/skill:gone", missing); !ok || err == nil {
		t.Fatalf("missing file: ok=%v err=%v", ok, err)
	}
	big := writeFile(t, filepath.Join(dir, "big.md"), strings.Repeat("x", MaxSkillFileBytes+1))
	_, _, err := ExpandSkill("/skill:big", []Skill{{Name: "big", Path: big}})
	if err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("oversize file: err=%v", err)
	}
}

func TestExpandSkillInvalidUTF8(t *testing.T) {
	path := writeFile(t, filepath.Join(t.TempDir(), "SKILL.md"), "---\nname: a\ndescription: d\n---\n\xff\n")
	got, _, err := ExpandSkill("/skill:a", []Skill{{Name: "a", Path: path}})
	if err != nil || !strings.Contains(got, "\uFFFD") {
		t.Fatalf("got %q, %v; want invalid bytes replaced", got, err)
	}
}
