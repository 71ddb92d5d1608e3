package mcp

import (
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxResultBytes is where a formatted result is cut (51,200 bytes).
const MaxResultBytes = 50 << 10

// Model-facing strings of mcp.md "Results".
const (
	noOutput        = "(no output)"
	truncatedNotice = "\n\n[MCP result truncated to 50KB]"
	toolErrorPrefix = "MCP tool error: "
)

// formatResult renders a tools/call result as text: content blocks in
// order, joined by newlines (text as is, embedded text resources prefixed
// "Resource: <uri>\n", anything else named by its MCP type), then the
// structured content as JSON.
func formatResult(r *sdk.CallToolResult) string {
	parts := make([]string, 0, len(r.Content)+1)
	for _, c := range r.Content {
		parts = append(parts, formatContent(c))
	}
	if r.StructuredContent != nil {
		if data, err := json.Marshal(r.StructuredContent, json.Deterministic(true)); err == nil {
			parts = append(parts, "Structured content:\n"+string(data))
		} else {
			parts = append(parts, "Structured content: (not valid JSON)")
		}
	}
	text := strings.Join(parts, "\n")
	if text == "" {
		return noOutput
	}
	return truncate(text)
}

func formatContent(c sdk.Content) string {
	switch c := c.(type) {
	case *sdk.TextContent:
		return c.Text
	case *sdk.EmbeddedResource:
		if r := c.Resource; r != nil && r.Blob == nil {
			return "Resource: " + r.URI + "\n" + r.Text
		}
	}
	return unsupported(mcpType(c))
}

// mcpType is the protocol's name for a content block ("image", "audio",
// "resource_link", ...), read from its wire form so that no Go type name
// can reach the model.
func mcpType(c sdk.Content) string {
	var head struct {
		Type string `json:"type"`
	}
	data, err := json.Marshal(c)
	if err != nil || json.Unmarshal(data, &head) != nil || head.Type == "" {
		return "unknown"
	}
	return head.Type
}

func unsupported(mcpType string) string {
	return "[Unsupported MCP content type: " + mcpType + "]"
}

// truncate keeps at most MaxResultBytes, cut at a UTF-8 boundary.
func truncate(text string) string {
	if len(text) <= MaxResultBytes {
		return text
	}
	cut := MaxResultBytes
	for cut > 0 && !utf8.RuneStart(text[cut]) {
		cut--
	}
	return text[:cut] + truncatedNotice
}
