package headless

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
)

// SDKServersOf reads --mcp-config values (each a JSON object or a file
// holding one, {"mcpServers": {name: {"type": ...}}}) and returns the
// names of the SDK's in-process servers (type "sdk"), in order; others
// names the rest, which tiny-go does not connect (its MCP servers come
// from its own catalog).
func SDKServersOf(configs []string) (sdkNames, others []string, err error) {
	for _, c := range configs {
		data := []byte(c)
		if !strings.HasPrefix(strings.TrimSpace(c), "{") {
			if data, err = os.ReadFile(c); err != nil {
				return nil, nil, fmt.Errorf("--mcp-config: %w", err)
			}
		}
		var doc struct {
			MCPServers map[string]struct {
				Type string `json:"type"`
			} `json:"mcpServers"`
		}
		if err := json.Unmarshal(data, &doc); err != nil {
			return nil, nil, fmt.Errorf("--mcp-config: not a JSON object with mcpServers: %w", err)
		}
		names := make([]string, 0, len(doc.MCPServers))
		for n := range doc.MCPServers {
			names = append(names, n)
		}
		slices.Sort(names)
		for _, n := range names {
			if doc.MCPServers[n].Type == "sdk" {
				sdkNames = append(sdkNames, n)
			} else {
				others = append(others, n)
			}
		}
	}
	return sdkNames, others, nil
}
