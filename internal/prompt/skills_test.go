package prompt

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func writeFile(t *testing.T, path, content string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func skillText(name, desc string) string {
	return "---\nname: " + name + "\ndescription: " + desc + "\n---\n# " + name + "\nBody of " + name + ".\n"
}

func TestDiscoverSkills(t *testing.T) {
	cwd := t.TempDir()
	dir := filepath.Join(cwd, ".tiny-agent", "skills")
	b := writeFile(t, filepath.Join(dir, "b", "SKILL.md"), skillText("beta", "Second"))
	a := writeFile(t, filepath.Join(dir, "a", "deep", "er", "SKILL.md"), skillText("alpha", "First"))
	writeFile(t, filepath.Join(dir, "c", "SKILL.md"), "no header here\n")
	writeFile(t, filepath.Join(dir, "d", "skill.md"), skillText("lower", "wrong file name"))
	writeFile(t, filepath.Join(dir, "e", "README.md"), skillText("readme", "not a skill"))
	dup := writeFile(t, filepath.Join(dir, "f", "SKILL.md"), skillText("beta", "Duplicate name"))
	_ = dup

	got, err := DiscoverSkills(cwd, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []Skill{
		{Name: "alpha", Description: "First", Path: a},
		{Name: "beta", Description: "Second", Path: b},
	}
	assertSkills(t, got, want)
}

func TestDiscoverSkillsExplicitFirstAndWins(t *testing.T) {
	cwd := t.TempDir()
	project := writeFile(t, filepath.Join(cwd, ".tiny-agent", "skills", "x", "SKILL.md"), skillText("shared", "project version"))
	other := t.TempDir()
	z := writeFile(t, filepath.Join(other, "z", "SKILL.md"), skillText("zed", "Z"))
	y := writeFile(t, filepath.Join(other, "y", "SKILL.md"), skillText("shared", "explicit version"))

	// Given out of order and with a repeat: explicit files are sorted,
	// deduplicated and come before project skills.
	got, err := DiscoverSkills(cwd, []string{z, y, z})
	if err != nil {
		t.Fatal(err)
	}
	assertSkills(t, got, []Skill{
		{Name: "shared", Description: "explicit version", Path: y},
		{Name: "zed", Description: "Z", Path: z},
	})

	// Explicitly naming a project skill lists it once.
	got, err = DiscoverSkills(cwd, []string{project})
	if err != nil {
		t.Fatal(err)
	}
	assertSkills(t, got, []Skill{{Name: "shared", Description: "project version", Path: project}})
}

func TestDiscoverSkillsExplicitRelativePath(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "rel", "SKILL.md"), skillText("rel", "Relative"))
	t.Chdir(dir)
	got, err := DiscoverSkills(t.TempDir(), []string{filepath.Join("rel", "SKILL.md")})
	if err != nil {
		t.Fatal(err)
	}
	assertSkills(t, got, []Skill{{Name: "rel", Description: "Relative", Path: filepath.Join(dir, "rel", "SKILL.md")}})
}

func TestDiscoverSkillsExplicitErrors(t *testing.T) {
	dir := t.TempDir()
	bad := writeFile(t, filepath.Join(dir, "bad.md"), "# no header\n")
	if _, err := DiscoverSkills(dir, []string{filepath.Join(dir, "missing.md")}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing explicit file: err = %v, want not-exist", err)
	}
	_, err := DiscoverSkills(dir, []string{bad})
	if err == nil || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), "header") {
		t.Errorf("explicit file without header: err = %v", err)
	}
	if _, err := DiscoverSkills(dir, []string{dir}); err == nil {
		t.Error("explicit directory accepted")
	}
}

func TestDiscoverSkillsNoDirectory(t *testing.T) {
	got, err := DiscoverSkills(t.TempDir(), nil)
	if err != nil || len(got) != 0 {
		t.Fatalf("got %v, %v; want no skills", got, err)
	}
}

func TestDiscoverSkillsHeaderMustFitBound(t *testing.T) {
	cwd := t.TempDir()
	dir := filepath.Join(cwd, SkillsDir)
	padding := strings.Repeat("x: y\n", MaxSkillHeaderBytes/5)
	writeFile(t, filepath.Join(dir, "big", "SKILL.md"), "---\nname: big\ndescription: d\n"+padding+"---\n")
	writeFile(t, filepath.Join(dir, "ok", "SKILL.md"), "---\nname: ok\ndescription: d\n---\n"+padding+padding)
	got, err := DiscoverSkills(cwd, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Name != "ok" {
		t.Fatalf("got %+v; want only the skill whose header fits", got)
	}
}

func TestDiscoverSkillsDoesNotFollowSymlinkedDirs(t *testing.T) {
	cwd := t.TempDir()
	outside := t.TempDir()
	writeFile(t, filepath.Join(outside, "SKILL.md"), skillText("outside", "via link"))
	dir := filepath.Join(cwd, SkillsDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "link")); err != nil {
		t.Skip("symlinks unavailable:", err)
	}
	got, err := DiscoverSkills(cwd, nil)
	if err != nil || len(got) != 0 {
		t.Fatalf("got %v, %v; want no skills through a symlinked directory", got, err)
	}
}

func assertSkills(t *testing.T, got, want []Skill) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d skills %+v, want %d %+v", len(got), got, len(want), want)
	}
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("skill %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

// Skills are found where Claude Code, Codex and others keep them, after
// tiny-go's own, with Claude Code's lenient header: an unquoted ": ", a
// folded description, allowed-tools as a line or a list, the directory's
// name when the header has none; a file without a description is one
// problem line.
func TestDiscoverSkillsEverywhere(t *testing.T) {
	cwd, home := t.TempDir(), t.TempDir()
	own := writeFile(t, filepath.Join(cwd, ".tiny-agent", "skills", "own", "SKILL.md"), skillText("own", "Ours"))
	cc := writeFile(t, filepath.Join(cwd, ".claude", "skills", "pdf", "SKILL.md"),
		"---\r\nname: pdf\r\ndescription: Use when: the user has a PDF\r\nallowed-tools: Read, Bash(pdftotext:*), Grep\r\n---\r\nBody\r\n")
	ag := writeFile(t, filepath.Join(cwd, ".agents", "skills", "review-code", "SKILL.md"),
		"---\ndescription: >\n  Reviews code\n  for bugs.\nallowed-tools:\n  - Read\n  - \"Bash(git diff:*)\"\n---\n")
	user := writeFile(t, filepath.Join(home, ".claude", "skills", "mine", "SKILL.md"), skillText("mine", "Personal"))
	writeFile(t, filepath.Join(cwd, ".claude", "skills", "broken", "SKILL.md"), "---\nname: broken\n---\n")
	writeFile(t, filepath.Join(home, ".claude", "skills", "own", "SKILL.md"), skillText("own", "shadowed by the project's"))
	got, problems, err := DiscoverSkillsFrom(cwd, home, nil)
	if err != nil {
		t.Fatal(err)
	}
	assertSkills(t, got, []Skill{
		{Name: "own", Description: "Ours", Path: own},
		{Name: "pdf", Description: "Use when: the user has a PDF", Path: cc, AllowedTools: []string{"Read", "Bash(pdftotext:*)", "Grep"}},
		{Name: "review-code", Description: "Reviews code for bugs.", Path: ag, AllowedTools: []string{"Read", "Bash(git diff:*)"}},
		{Name: "mine", Description: "Personal", Path: user},
	})
	if len(problems) != 1 || !strings.Contains(problems[0], "broken") {
		t.Errorf("problems %q", problems)
	}
}
