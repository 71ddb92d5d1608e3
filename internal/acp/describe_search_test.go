package acp

import (
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"
)

// A web search reaches an ACP client as a search, titled by its query.
func TestDescribeWebSearch(t *testing.T) {
	c := describeCall("web_search", "web_search", `{"query":"go 1.25 release notes"}`, "/w")
	if c.kind != acpsdk.ToolKindSearch || c.title != "Search the web: go 1.25 release notes" {
		t.Fatalf("%+v", c)
	}
}
