package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// listServer is a hand-written MCP endpoint (JSON responses, legacy
// handshake) whose tools/list pages come from pages, so that answers the
// SDK server would never give can be tested.
func listServer(t *testing.T, pages func(cursor string) (tools string, next string)) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Cursor string `json:"cursor"`
			} `json:"params"`
		}
		body, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(body, &req); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		if req.ID == nil { // a notification
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		switch req.Method {
		case "initialize":
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"fake","version":"1"}}}`, req.ID)
		case "tools/list":
			tools, next := pages(req.Params.Cursor)
			nextJSON := ""
			if next != "" {
				nextJSON = fmt.Sprintf(`,"nextCursor":%q`, next)
			}
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"tools":[%s]%s}}`, req.ID, tools, nextJSON)
		default:
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"Method not found"}}`, req.ID)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func toolJSON(name, description, schema string) string {
	return fmt.Sprintf(`{"name":%q,"description":%q,"inputSchema":%s}`, name, description, schema)
}

func onePage(tools ...string) func(string) (string, string) {
	return func(string) (string, string) { return strings.Join(tools, ","), "" }
}

func TestListPaginationFollowsCursors(t *testing.T) {
	var seen []string
	url := listServer(t, func(cursor string) (string, string) {
		seen = append(seen, cursor)
		switch cursor {
		case "":
			return toolJSON("a", "A", objectSchema), "c1"
		case "c1":
			return "", "c2" // an empty page is fine
		case "c2":
			return toolJSON("b", "B", objectSchema), ""
		}
		t.Errorf("unexpected cursor %q", cursor)
		return "", ""
	})
	c := connect(t, catalogServer(t, "p", entry{URL: url, AllowedTools: []string{"b", "a"}}))
	if len(c.Tools()) != 2 || strings.Join(seen, ",") != ",c1,c2" {
		t.Fatalf("tools %d, cursors %q", len(c.Tools()), seen)
	}
}

func TestListRules(t *testing.T) {
	tests := []struct {
		name    string
		pages   func(string) (string, string)
		allowed []string
		want    string
	}{
		{"repeated cursor", func(cursor string) (string, string) {
			switch cursor {
			case "":
				return toolJSON("a", "A", objectSchema), "c1"
			case "c1":
				return toolJSON("b", "B", objectSchema), "c2"
			}
			return toolJSON("c", "C", objectSchema), "c1"
		}, []string{"a"}, "tools/list repeated a cursor"},
		{"endless cursors", func(cursor string) (string, string) {
			return "", cursor + "x"
		}, []string{"a"}, "tools/list did not end after 128 pages"},
		{"duplicate name across pages", func(cursor string) (string, string) {
			if cursor == "" {
				return toolJSON("a", "A", objectSchema), "c1"
			}
			return toolJSON("a", "again", objectSchema), ""
		}, []string{"a"}, `tools/list has the tool "a" twice`},
		{"empty name", onePage(toolJSON("a", "A", objectSchema), toolJSON("", "nameless", objectSchema)), []string{"a"},
			"tools/list has a tool without a name"},
		{"description too long", onePage(toolJSON("a", strings.Repeat("d", MaxDescriptionBytes+1), objectSchema)), []string{"a"},
			`tool "a": description is 8193 bytes (at most 8192)`},
		{"schema not an object type", onePage(toolJSON("a", "A", `{"type":"string"}`)), []string{"a"},
			`tool "a": input schema must have "type": "object"`},
		{"schema keyword outside the subset", onePage(toolJSON("a", "A", `{"type":"object","properties":{"x":{"$ref":"#/defs/x"}}}`)), []string{"a"},
			`tool "a": input schema at /properties/x: unsupported keyword "$ref"`},
		{"schema too large", onePage(toolJSON("a", "A", `{"type":"object","description":"`+strings.Repeat("x", MaxInputSchemaBytes)+`"}`)), []string{"a"},
			`tool "a": input schema is 51234 bytes (at most 51200)`},
		{"schema too deep", onePage(toolJSON("a", "A", `{"type":"object","const":`+strings.Repeat("[", 20)+strings.Repeat("]", 20)+`}`)), []string{"a"},
			`tool "a": input schema is nested 21 levels deep (at most 20)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url := listServer(t, tt.pages)
			_, err := Connect(context.Background(), catalogServer(t, "srv", entry{URL: url, AllowedTools: tt.allowed}), Options{})
			assertConnectError(t, err, ErrorConnectionFailed, "MCP srv: listing tools: "+tt.want)
		})
	}
}

func TestListChecksOnlyOfferedToolsInDetail(t *testing.T) {
	// An odd tool that is not allowlisted does not block the server.
	url := listServer(t, onePage(
		toolJSON("good", "G", objectSchema),
		toolJSON("odd", strings.Repeat("d", MaxDescriptionBytes+1), `{"type":"object","anyOf":[]}`),
	))
	c := connect(t, catalogServer(t, "srv", entry{URL: url, AllowedTools: []string{"good"}}))
	if c.StartupLine() != "MCP srv: connected (2025-11-25, 1 tools)" {
		t.Fatal(c.StartupLine())
	}
}
