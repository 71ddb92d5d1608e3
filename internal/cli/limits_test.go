package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/providertest"
)

// A reply asking for more tool calls than --max-tool-calls runs none of
// them; after the one retry the run fails with a line naming the flag.
func TestMaxToolCallsFlag(t *testing.T) {
	var calls []providertest.ToolCall
	for i := range 3 {
		calls = append(calls, toolCall(fmt.Sprintf("c%d", i), "bash", fmt.Sprintf(`{"command":"touch f%d"}`, i)))
	}
	srv := providertest.New(t, providertest.Reply{ToolCalls: calls}, providertest.Reply{ToolCalls: calls})
	c := newCLI(t, srv)
	code, _, stderr := c.main("", "--max-tool-calls", "2", "go")
	if code == 0 || !strings.Contains(stderr, "more than the limit of 2 (--max-tool-calls)") {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	for i := range 3 {
		if _, err := os.Stat(filepath.Join(c.dir, fmt.Sprintf("f%d", i))); err == nil {
			t.Fatalf("call %d ran", i)
		}
	}
	if code, _, stderr := c.main("", "--max-tool-calls", "0", "go"); code != 2 || !strings.Contains(stderr, "--max-tool-calls must be at least 1") {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
}

// A one-character key is never a redaction pattern: the provider's error
// message keeps its k's, and one warning says the key cannot be scrubbed.
func TestShortKeyIsNoRedactionPattern(t *testing.T) {
	srv := providertest.New(t, providertest.Reply{Status: 401, Body: `{"error":{"message":"key k is not known: check your keys"}}`})
	c := newCLI(t, srv)
	c.env["OPENROUTER_API_KEY"] = "k"
	code, _, stderr := c.main("", "go")
	if code == 0 {
		t.Fatalf("exit 0:\n%s", stderr)
	}
	if !strings.Contains(stderr, "check your keys") || strings.Contains(stderr, "[redacted]") {
		t.Fatalf("the short key was used as a pattern:\n%s", stderr)
	}
	if n := strings.Count(stderr, "cannot be scrubbed"); n != 1 || !strings.Contains(stderr, "$OPENROUTER_API_KEY is shorter than 8 characters") {
		t.Fatalf("%d warnings:\n%s", n, stderr)
	}
}
