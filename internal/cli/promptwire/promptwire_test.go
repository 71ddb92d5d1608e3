package promptwire

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/attach"
	"github.com/tiny-agent/tiny-go/internal/session"
)

// A nested CLAUDE.md goes with the first successful read under its
// directory, after what the language servers add, and only once; a
// failed call worked nowhere; one a resumed conversation already holds is
// not given again.
func TestResultNoteGivesNestedInstructionsOnce(t *testing.T) {
	cwd := t.TempDir()
	if err := os.MkdirAll(filepath.Join(cwd, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cwd, "sub", "CLAUDE.md"), []byte("use tabs\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	lsp := func(context.Context, string, string, jsontext.Value, bool) string { return "[lsp]" }
	note := ResultNote(cwd, nil, nil, lsp)
	args := jsontext.Value(`{"file_path":"sub/a.go"}`)
	if got := note(context.Background(), "1", "Read", args, true); got != "[lsp]" {
		t.Fatalf("failed call: %q", got)
	}
	first := note(context.Background(), "2", "Read", args, false)
	if !strings.HasPrefix(first, "[lsp]") || !strings.Contains(first, `<project_instructions path="sub/CLAUDE.md">`) || !strings.Contains(first, "use tabs") {
		t.Fatalf("first read: %q", first)
	}
	if got := note(context.Background(), "3", "read", jsontext.Value(`{"path":"sub/b.go"}`), false); got != "[lsp]" {
		t.Fatalf("second read: %q", got)
	}
	if got := note(context.Background(), "4", "bash", args, false); got != "[lsp]" {
		t.Fatalf("bash: %q", got)
	}
	given := first[len("[lsp]"):]
	st := &session.State{ActiveContext: []session.Message{{Role: session.RoleTool, Content: &given}}}
	if got := ResultNote(cwd, nil, st, nil)(context.Background(), "5", "Edit", args, false); got != "" {
		t.Fatalf("resumed conversation got it again: %q", got)
	}
}

func pngBytes(t *testing.T) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewRGBA(image.Rect(0, 0, 3, 2))); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// A stored image is named in the prompt and loaded back by that name for
// the request; storing the same bytes again is no error.
func TestStoreImageThenLoad(t *testing.T) {
	cwd := t.TempDir()
	data := pngBytes(t)
	ref, err := StoreImage(cwd, attach.Attachment{Mention: "a.png", Kind: "image", Image: data, MediaType: "image/png"})
	if err != nil {
		t.Fatal(err)
	}
	if again, err := StoreImage(cwd, attach.Attachment{Mention: "a.png", Kind: "image", Image: data, MediaType: "image/png"}); err != nil || again != ref {
		t.Fatalf("again: %q, %v", again, err)
	}
	imgs := (&ImageLoader{Cwd: cwd}).Images("look " + ref)
	if len(imgs) != 1 || imgs[0].MediaType != "image/png" || len(imgs[0].Data) == 0 {
		t.Fatalf("loaded %+v for %q", imgs, ref)
	}
	if imgs := (&ImageLoader{Cwd: t.TempDir()}).Images(ref); len(imgs) != 0 {
		t.Fatalf("a missing file was loaded: %+v", imgs)
	}
}

// A failure over an image, while images are sent and the conversation
// holds one, puts a text-only agent in place and says so; anything else
// is left as it was.
func TestImageRejected(t *testing.T) {
	ref := "[image: image-" + strings.Repeat("a", 64) + ".png (3x2, from a.png)]"
	st := &session.State{ActiveContext: []session.Message{{Role: session.RoleUser, Content: &ref}}}
	failed := func(msg string) agent.Result {
		return agent.Result{Outcome: session.OutcomeFailed, Error: &session.ErrorInfo{Message: msg}}
	}
	calls := 0
	textOnly := func() error { calls++; return nil }
	state := func() *session.State { return st }

	res := ImageRejected(failed("invalid image content"), true, state, textOnly)
	if calls != 1 || !strings.Contains(res.Error.Message, "sends images as their text reference only") {
		t.Fatalf("calls %d, message %q", calls, res.Error.Message)
	}
	for name, res := range map[string]agent.Result{
		"not about images": ImageRejected(failed("rate limited"), true, state, textOnly),
		"images not sent":  ImageRejected(failed("invalid image"), false, state, textOnly),
		"no image held":    ImageRejected(failed("invalid image"), true, func() *session.State { return &session.State{} }, textOnly),
	} {
		if calls != 1 || strings.Contains(res.Error.Message, "text reference") {
			t.Fatalf("%s: calls %d, message %q", name, calls, res.Error.Message)
		}
	}
	if res := ImageRejected(failed("invalid image"), true, state, func() error { return errors.New("no") }); strings.Contains(res.Error.Message, "text reference") {
		t.Fatalf("a failed rebuild was reported as done: %q", res.Error.Message)
	}
}
