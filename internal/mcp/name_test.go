package mcp

import (
	"regexp"
	"strings"
	"testing"
)

// Names are Claude Code's where the alias and tool are plain, and stay in
// the provider alphabet, distinct and within 64 characters otherwise.
func TestToolName(t *testing.T) {
	valid := regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	for _, c := range []struct{ alias, tool, want string }{
		{"docs", "search", "mcp__docs__search"},
		{"github-mcp", "create_issue", "mcp__github-mcp__create_issue"},
		{"echo", "echo", "mcp__echo__echo"},
		{"my.server", "read file", "mcp__my-2Eserver__read-20file"},
		{"a__b", "t", "mcp__a_-5Fb__t"},
		{"a_", "t", "mcp__a-5F__t"},
		{"x", "v-AB", "mcp__x__v-2DAB"},
	} {
		got, err := ToolName(c.alias, c.tool)
		if err != nil || got != c.want {
			t.Errorf("ToolName(%q, %q) = %q, %v; want %q", c.alias, c.tool, got, err, c.want)
		}
	}
	seen := map[string]string{}
	for _, p := range [][2]string{{"a", "b_c"}, {"a_", "c"}, {"a", "_b"}, {"a_", "_b"}, {"ü/é", "a.b?c>~"}, {"a", "b.c"}, {"a", "b-2Ec"}, {"ab", strings.Repeat("x", 80)}, {"ab", strings.Repeat("x", 81)}} {
		got, _ := ToolName(p[0], p[1])
		if !valid.MatchString(got) {
			t.Errorf("%q outside the provider alphabet or too long", got)
		}
		if other, dup := seen[got]; dup {
			t.Errorf("%v and %s share %q", p, other, got)
		}
		seen[got] = p[0] + "/" + p[1]
	}
	if Display("docs", "search") != "mcp:docs/search" {
		t.Error(Display("docs", "search"))
	}
}
