package mcp

import (
	"strings"
	"testing"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestFormatResultTruncation(t *testing.T) {
	exact := strings.Repeat("a", MaxResultBytes)
	if got := formatResult(textResult(exact)); got != exact {
		t.Errorf("a result of exactly 50 KB was changed (len %d)", len(got))
	}
	over := exact + "b"
	if got := formatResult(textResult(over)); got != exact+truncatedNotice {
		t.Errorf("51,201 bytes: got len %d", len(got))
	}
	// A 3-byte rune straddling the limit is dropped whole.
	straddle := strings.Repeat("a", MaxResultBytes-1) + "€"
	got := formatResult(textResult(straddle))
	if got != strings.Repeat("a", MaxResultBytes-1)+truncatedNotice || !utf8.ValidString(got) {
		t.Errorf("straddling rune: got len %d, valid %v", len(got), utf8.ValidString(got))
	}
}

func TestFormatResultStructuredOnly(t *testing.T) {
	got := formatResult(&sdk.CallToolResult{StructuredContent: []any{1, "two"}})
	if got != "Structured content:\n[1,\"two\"]" {
		t.Errorf("got %q", got)
	}
}

func TestFormatResultNestedAndUnknownContent(t *testing.T) {
	got := formatResult(&sdk.CallToolResult{Content: []sdk.Content{
		&sdk.ResourceLink{URI: "file:///x", Name: "x"},
		&sdk.EmbeddedResource{},
		nil,
	}})
	want := "[Unsupported MCP content type: resource_link]\n[Unsupported MCP content type: resource]\n[Unsupported MCP content type: unknown]"
	if got != want {
		t.Errorf("got %q", got)
	}
	if strings.Contains(got, "*mcp.") || strings.Contains(got, "sdk.") {
		t.Error("a Go type name leaked into the result")
	}
}
