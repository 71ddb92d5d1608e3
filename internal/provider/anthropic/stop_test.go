package anthropic_test

import (
	"bytes"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/provider"
	"github.com/tiny-agent/tiny-go/internal/providertest"
)

func fixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Replies told as they happened: content given whole is used as given,
// a refusal and a cut-off call say so, and a failed reply keeps its usage.
// Each stream is also split at every byte.
func TestStopReasonsAndWholeContent(t *testing.T) {
	for _, tt := range []struct {
		name, finish, text, calls string
	}{
		{"tool_use_whole.sse", provider.FinishToolUse, "", `read {"path":"a.txt"}`},
		{"content_in_start.sse", provider.FinishToolUse, "Whole answer.", `bash {"command":"ls"}`},
		{"refusal.sse", provider.FinishRefusal, "I started to", ""},
		{"max_tokens_tool.sse", provider.FinishLength, "", `write {"path":"a.txt","content":"aa`},
	} {
		data := fixture(t, tt.name)
		for i := 0; i <= len(data); i += max(1, len(data)/97) {
			srv := providertest.New(t, providertest.Reply{Handler: splitHandler(data, i)})
			resp, err := newClient(t, srv, "").Stream(t.Context(), provider.Request{Model: "claude-sonnet-4-5", Messages: base()}, nil)
			if err != nil {
				t.Fatalf("%s split at %d: %v", tt.name, i, err)
			}
			var calls []string
			for _, c := range resp.ToolCalls {
				calls = append(calls, c.Name+" "+c.Arguments)
			}
			text := ""
			if resp.Content != nil {
				text = *resp.Content
			}
			if resp.FinishReason != tt.finish || text != tt.text || strings.Join(calls, ";") != tt.calls {
				t.Fatalf("%s split at %d: finish %q text %q calls %q", tt.name, i, resp.FinishReason, text, calls)
			}
			if tt.finish == provider.FinishRefusal && resp.StopDetail != "refusal" {
				t.Fatalf("stop detail %q", resp.StopDetail)
			}
		}
	}
}

// A stream that failed after content reports the tokens it had used.
func TestFailedReplyKeepsItsUsage(t *testing.T) {
	srv := providertest.New(t, providertest.Reply{Body: fixture(t, "overloaded_mid.sse")})
	_, err := newClient(t, srv, "").Stream(t.Context(), provider.Request{Model: "claude-sonnet-4-5", Messages: base()}, nil)
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.Retryable || pe.Usage == nil || pe.Usage.Input != 70 || pe.Usage.Output != 1 {
		t.Fatalf("err %v usage %+v", err, pe)
	}
}

// pause_turn: the reply is sent back and continued; the caller sees one
// reply with both parts and the usage of both requests.
func TestPauseTurnIsContinued(t *testing.T) {
	srv := providertest.New(t,
		providertest.Reply{Body: fixture(t, "pause_turn.sse")},
		providertest.Reply{Text: "found it.", Usage: &providertest.Usage{PromptTokens: 120, CompletionTokens: 3}},
	)
	resp, err := newClient(t, srv, "").Stream(t.Context(), provider.Request{Model: "claude-sonnet-4-5", Messages: base()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.FinishReason != provider.FinishStop || *resp.Content != "Searching… found it." || resp.Usage.Input != 220 {
		t.Fatalf("reply %q %q usage %+v", resp.FinishReason, *resp.Content, resp.Usage)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	second := decodeBody(t, reqs[1].Body)
	last := second.Messages[len(second.Messages)-1]
	if last.Role != "assistant" || !bytes.Contains(last.Content[0], []byte(`"Searching… "`)) {
		t.Fatalf("the paused reply was not sent back: %+v", last)
	}
}

// A server that pauses forever is not followed forever.
func TestPauseTurnIsBounded(t *testing.T) {
	var replies []providertest.Reply
	for range provider.MaxPauseTurns + 1 {
		replies = append(replies, providertest.Reply{Body: fixture(t, "pause_turn.sse")})
	}
	srv := providertest.New(t, replies...)
	_, err := newClient(t, srv, "").Stream(t.Context(), provider.Request{Model: "claude-sonnet-4-5", Messages: base()}, nil)
	var pe *provider.Error
	if !errors.As(err, &pe) || !strings.Contains(pe.Message, "paused the reply 6 times") || pe.Usage == nil || pe.Usage.Input != 600 {
		t.Fatalf("err %v", err)
	}
	reqs := srv.Requests()
	if len(reqs) != provider.MaxPauseTurns+1 {
		t.Fatalf("%d requests", len(reqs))
	}
	// Each continuation sends back what came since the last one, once:
	// the last request holds the paused text five times, not 1+2+3+4+5.
	last := decodeBody(t, reqs[len(reqs)-1].Body)
	if n := bytes.Count(reqs[len(reqs)-1].Body, []byte("Searching… ")); n != provider.MaxPauseTurns || len(last.Messages) != 2 {
		t.Fatalf("the paused text was sent back %d times in %d turns", n, len(last.Messages))
	}
}

// splitHandler serves an SSE stream in two writes, cut at byte i.
func splitHandler(data string, i int) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte(data[:i]))
		http.NewResponseController(w).Flush()
		_, _ = w.Write([]byte(data[i:]))
	}
}

// A tool_use whose input was given whole goes back with that input.
func TestWholeToolInputIsSentBack(t *testing.T) {
	srv := providertest.New(t, providertest.Reply{Body: fixture(t, "tool_use_whole.sse")}, providertest.Reply{Text: "ok"})
	c := newClient(t, srv, "")
	resp, err := c.Stream(t.Context(), provider.Request{Model: "claude-sonnet-4-5", Messages: base()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	result := "alpha"
	msgs := append(base(), provider.Message{Role: provider.RoleAssistant, ToolCalls: resp.ToolCalls},
		provider.Message{Role: provider.RoleTool, ToolCallID: resp.ToolCalls[0].ID, Content: &result})
	if _, err := c.Stream(t.Context(), provider.Request{Model: "claude-sonnet-4-5", Messages: msgs}, nil); err != nil {
		t.Fatal(err)
	}
	body := decodeBody(t, srv.Requests()[1].Body)
	turn := body.Messages[1]
	if turn.Role != "assistant" || len(turn.Content) != 1 || !bytes.Contains(turn.Content[0], []byte(`"input":{"path":"a.txt"}`)) {
		t.Fatalf("assistant turn sent back: %s", turn.Content)
	}
}
