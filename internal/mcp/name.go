package mcp

import (
	"encoding/base64"
	"fmt"
)

// MaxToolNameLen is the longest model-facing name providers accept.
const MaxToolNameLen = 64

// ToolName returns the model-facing name of an MCP tool:
// "mcp__<base64url(alias)>__<base64url(tool)>", unpadded. Encoding keeps any
// alias or tool name within the [A-Za-z0-9_-] alphabet providers require.
func ToolName(alias, tool string) (string, error) {
	enc := base64.RawURLEncoding
	name := "mcp__" + enc.EncodeToString([]byte(alias)) + "__" + enc.EncodeToString([]byte(tool))
	if len(name) > MaxToolNameLen {
		return "", fmt.Errorf("the model-facing name of %s would be %d characters (at most %d); shorten the alias or the tool name",
			Display(alias, tool), len(name), MaxToolNameLen)
	}
	return name, nil
}

// Display is the human name of an MCP tool in logs: "mcp:<alias>/<tool>".
func Display(alias, tool string) string { return "mcp:" + alias + "/" + tool }
