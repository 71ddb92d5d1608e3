package mcp

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

// MaxToolNameLen is the longest model-facing name providers accept.
const MaxToolNameLen = 64

// ToolName returns the model-facing name of an MCP tool as Claude Code
// names it, "mcp__<alias>__<tool>", so hooks, permission rules and models
// trained on Claude Code read it plainly. A byte outside [A-Za-z0-9_-] is
// escaped as -XX (upper-case hex), and so is a "-" that is followed by two
// upper-case hex digits, which keeps the mapping reversible; in the alias
// the second "_" of a "__" and a trailing "_" are escaped too, so the
// first "__" after "mcp__" always ends it. A name over MaxToolNameLen is
// shortened, ending in "-" and a short hash of the whole name. The error
// is kept for callers; the name always fits.
func ToolName(alias, tool string) (string, error) {
	name := "mcp__" + escapeAlias(alias) + "__" + escapeName(tool)
	if len(name) > MaxToolNameLen {
		sum := sha256.Sum256([]byte(name))
		h := hex.EncodeToString(sum[:4])
		name = name[:MaxToolNameLen-len(h)-1] + "-" + h
	}
	return name, nil
}

func escapeName(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		plain := c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
			(c == '-' && !(i+2 < len(s) && isUpperHex(s[i+1]) && isUpperHex(s[i+2])))
		if plain {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "-%02X", c)
	}
	return b.String()
}

func escapeAlias(alias string) string {
	s := escapeName(alias)
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '_' && ((i > 0 && s[i-1] == '_') || i == len(s)-1) {
			b.WriteString("-5F")
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isUpperHex(c byte) bool { return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'F') }

// Display is the human name of an MCP tool in logs: "mcp:<alias>/<tool>".
func Display(alias, tool string) string { return "mcp:" + alias + "/" + tool }
