package provider

import (
	"strings"
	"testing"
)

// A user message with images becomes a text part and image_url data URL
// parts; the cached encoding notices images that changed.
func TestEncodeImages(t *testing.T) {
	var e requestEncoder
	msgs := []Message{
		{Role: RoleSystem, Content: str("sys")},
		{Role: RoleUser, Content: str("look [image: x]"), Images: []Image{{MediaType: "image/png", Data: []byte("PNGDATA")}}},
	}
	body := string(checkEncode(t, &e, Request{Model: "m", Messages: msgs}))
	want := `{"role":"user","content":[{"type":"text","text":"look [image: x]"},{"type":"image_url","image_url":{"url":"data:image/png;base64,UE5HREFUQQ=="}}]}`
	if !strings.Contains(body, want) {
		t.Fatalf("body lacks %s:\n%s", want, body)
	}
	msgs[1].Images = nil
	if body := checkEncode(t, &e, Request{Model: "m", Messages: msgs}); strings.Contains(string(body), "image_url") {
		t.Fatalf("images dropped, still encoded:\n%s", body)
	}
}
