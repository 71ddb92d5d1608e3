package anthropic

import (
	"strings"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/provider"
)

// A user message's images become base64 image blocks before its text.
func TestEncodeImageBlocks(t *testing.T) {
	text := "what is this [image: x]"
	body, err := encodeRequest(provider.Request{Model: "anthropic/claude-x", Messages: []provider.Message{
		{Role: provider.RoleUser, Content: &text, Images: []provider.Image{{MediaType: "image/webp", Data: []byte("RIFF")}}},
	}}, "", 0, false)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"image","source":{"type":"base64","media_type":"image/webp","data":"UklGRg=="}},{"type":"text","text":"what is this [image: x]"`
	if !strings.Contains(string(body), want) {
		t.Fatalf("body lacks %s:\n%s", want, body)
	}
}
