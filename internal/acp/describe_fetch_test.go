package acp

import (
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"
)

// An editor shows web_fetch as a fetch of its URL.
func TestDescribeWebFetch(t *testing.T) {
	c := describeCall("web_fetch", "web_fetch", `{"url":"https://go.dev/doc/","prompt":"p"}`, "/w")
	if c.kind != acpsdk.ToolKindFetch || c.title != "Fetch https://go.dev/doc/" {
		t.Fatalf("kind %q, title %q", c.kind, c.title)
	}
}
