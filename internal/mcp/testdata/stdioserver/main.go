// Command stdioserver is an MCP server built with the official Go SDK that
// speaks over stdio, for the tests of internal/mcp and internal/cli.
//
// It writes its pid to $MCP_TEST_DIR/server.pid when that is set, logs a
// line to stderr, and offers: echo (returns "echo: <text>"), env (returns
// its environment), spawn (starts a long sleep in its process group and
// returns its pid, also written to $MCP_TEST_DIR/child.pid) and crash
// (exits with status 3 in the middle of the call).
package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type echoArgs struct {
	Text string `json:"text" jsonschema:"what to echo"`
}

type noArgs struct{}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

func writePid(name string, pid int) {
	if dir := os.Getenv("MCP_TEST_DIR"); dir != "" {
		os.WriteFile(filepath.Join(dir, name), []byte(strconv.Itoa(pid)), 0o600)
	}
}

func main() {
	writePid("server.pid", os.Getpid())
	fmt.Fprintln(os.Stderr, "stdioserver: starting")
	s := mcp.NewServer(&mcp.Implementation{Name: "stdioserver", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "echoes its text"}, func(_ context.Context, _ *mcp.CallToolRequest, a echoArgs) (*mcp.CallToolResult, any, error) {
		return text("echo: " + a.Text), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "env", Description: "returns the environment"}, func(context.Context, *mcp.CallToolRequest, noArgs) (*mcp.CallToolResult, any, error) {
		return text(strings.Join(os.Environ(), "\n")), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "spawn", Description: "starts a child that sleeps"}, func(context.Context, *mcp.CallToolRequest, noArgs) (*mcp.CallToolResult, any, error) {
		cmd := exec.Command("sleep", "300")
		if err := cmd.Start(); err != nil {
			return nil, nil, err
		}
		writePid("child.pid", cmd.Process.Pid)
		return text(strconv.Itoa(cmd.Process.Pid)), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "crash", Description: "exits in the middle of the call"}, func(context.Context, *mcp.CallToolRequest, noArgs) (*mcp.CallToolResult, any, error) {
		fmt.Fprintln(os.Stderr, "stdioserver: crashing")
		os.Exit(3)
		return nil, nil, nil
	})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Print(err)
	}
}
