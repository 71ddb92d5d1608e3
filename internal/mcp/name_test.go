package mcp

import (
	"encoding/base64"
	"regexp"
	"strings"
	"testing"
)

func TestToolName(t *testing.T) {
	got, err := ToolName("docs", "search")
	if err != nil || got != "mcp__ZG9jcw__c2VhcmNo" {
		t.Fatalf("ToolName = %q, %v", got, err)
	}
	// Unpadded base64url of arbitrary bytes stays in the provider alphabet.
	got, err = ToolName("ü/é", "a.b?c>~")
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`).MatchString(got) || strings.Contains(got, "=") {
		t.Errorf("name %q outside the provider alphabet", got)
	}
	if want := "mcp__" + base64.RawURLEncoding.EncodeToString([]byte("ü/é")) + "__" + base64.RawURLEncoding.EncodeToString([]byte("a.b?c>~")); got != want {
		t.Errorf("got %q, want %q", got, want)
	}

	// "mcp__" + "YWI" + "__" + 54 characters for 40 bytes = 64; 41 bytes
	// take 55 characters.
	if n, err := ToolName("ab", strings.Repeat("x", 40)); err != nil || len(n) != 64 {
		t.Errorf("64-character name: %q, %v", n, err)
	}
	if _, err := ToolName("ab", strings.Repeat("x", 41)); err == nil || !strings.Contains(err.Error(), "mcp:ab/") {
		t.Errorf("65-character name: %v", err)
	}
	if Display("docs", "search") != "mcp:docs/search" {
		t.Error(Display("docs", "search"))
	}
}
