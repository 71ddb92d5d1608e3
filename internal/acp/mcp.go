package acp

import (
	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/tiny-agent/tiny-go/internal/mcp"
)

// clientServers are the MCP servers the client gave. tiny-go offers an MCP
// server's tools only from its catalog, where each entry lists the tools
// it may call (allowedTools); a client's server has no such list, so it is
// not connected: the session gets the servers of `tiny-go acp --mcp`. The
// names are logged so the user sees why a server's tools are missing.
func (srv *server) clientServers(list []acpsdk.McpServer) []mcp.Server {
	for _, s := range list {
		name := ""
		switch {
		case s.Stdio != nil:
			name = s.Stdio.Name
		case s.Http != nil:
			name = s.Http.Name
		case s.Sse != nil:
			name = s.Sse.Name
		}
		srv.log.Warn("MCP server given by the editor is not connected: list it in $TINY_MCP_CONFIG with its allowedTools and start tiny-go acp with --mcp", "server", name)
	}
	return nil
}
