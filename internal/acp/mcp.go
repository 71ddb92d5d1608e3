package acp

import acpsdk "github.com/coder/acp-go-sdk"

// mcpNames are the names of the MCP servers the client gave (stdio, HTTP
// or SSE): the backend connects those its catalog knows.
func mcpNames(list []acpsdk.McpServer) []string {
	var names []string
	for _, s := range list {
		switch {
		case s.Stdio != nil:
			names = append(names, s.Stdio.Name)
		case s.Http != nil:
			names = append(names, s.Http.Name)
		case s.Sse != nil:
			names = append(names, s.Sse.Name)
		}
	}
	return names
}
