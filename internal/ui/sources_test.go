package ui

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/provider"
)

func TestSourceLines(t *testing.T) {
	if SourceLines(nil) != nil {
		t.Fatal("lines for no sources")
	}
	got := SourceLines([]provider.Source{{Title: "Go\x1b[31m 1.25", URL: "https://go.dev/doc/go1.25"}, {URL: "https://x.test/"}, {Title: strings.Repeat("t", 100), URL: "https://y.test/"}})
	want := []string{"Sources:", "  1. Go 1.25 — https://go.dev/doc/go1.25", "  2. https://x.test/", "  3. " + strings.Repeat("t", 79) + "… — https://y.test/"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	var many []provider.Source
	for i := range 12 {
		many = append(many, provider.Source{URL: fmt.Sprintf("https://%d.test/", i)})
	}
	if lines := SourceLines(many); len(lines) != 12 || lines[11] != "  … and 2 more" {
		t.Fatalf("%q", lines)
	}
}
