package attach

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"
)

// Limits of what one mention brings.
const (
	// MaxText is how much of a text file goes with the prompt; the rest
	// is cut with a visible note.
	MaxText = 256 << 10
	// MaxFile is the largest file a mention takes at all; past it the
	// mention is refused.
	MaxFile = 16 << 20
	// maxListing bounds a directory listing.
	maxListing = 500
)

// mentionRE finds @path words: at the start or after white space.
var mentionRE = regexp.MustCompile(`(^|\s)@([^\s@]+)`)

// Mentions are the @paths of text, in order, without duplicates.
func Mentions(text string) []string {
	var out []string
	seen := map[string]bool{}
	for _, m := range mentionRE.FindAllStringSubmatch(text, -1) {
		p := strings.TrimRight(m[2], ".,;:!?)]}\"'")
		if p == "" || seen[p] {
			continue
		}
		seen[p] = true
		out = append(out, p)
	}
	return out
}

// Attachment is what one mention brought.
type Attachment struct {
	Mention string // as written, without the @
	Kind    string // "file", "directory", "image"
	// Note is the one line the transcript shows: "attached main.go
	// (1.2 KB)".
	Note string
	// Text is the block that goes with the prompt (files and listings).
	Text string
	// Image is the image's bytes and media type (Kind "image").
	Image     []byte
	MediaType string
}

// Error is a mention that cannot be attached; its text is the one line
// the user sees.
type Error struct {
	Mention string
	Reason  string
}

func (e *Error) Error() string { return "@" + e.Mention + ": " + e.Reason + "; nothing was sent." }

// Expand resolves the mentions of prompt under root. Any mention that
// cannot be attached fails the whole prompt (nothing half-built is sent).
// A mention that names no existing path is left as text (an e-mail
// address, a handle).
func Expand(root, prompt string) ([]Attachment, error) {
	var out []Attachment
	for _, m := range Mentions(prompt) {
		a, err := Resolve(root, m)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}

// Resolve attaches one mentioned path, relative to root (or absolute
// inside it). A path that leads outside root, also through a symlink, is
// refused.
func Resolve(root, mention string) (Attachment, error) {
	fail := func(format string, args ...any) (Attachment, error) {
		return Attachment{}, &Error{Mention: mention, Reason: fmt.Sprintf(format, args...)}
	}
	rootReal, err := filepath.EvalSymlinks(root)
	if err != nil {
		return fail("the working directory cannot be read: %v", err)
	}
	p := mention
	if !filepath.IsAbs(p) {
		p = filepath.Join(root, p)
	}
	p = filepath.Clean(p)
	if !within(root, p) && !within(rootReal, p) {
		if _, err := os.Lstat(p); err != nil {
			return Attachment{}, os.ErrNotExist
		}
		return fail("outside the working directory; only paths under it can be attached")
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return Attachment{}, os.ErrNotExist
	}
	if !within(rootReal, real) {
		return fail("a symlink to %s, outside the working directory; only paths under it can be attached", real)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return fail("%v", err)
	}
	rel, _ := filepath.Rel(rootReal, real)
	rel = filepath.ToSlash(rel)
	switch {
	case fi.IsDir():
		return listing(real, rel, mention)
	case !fi.Mode().IsRegular():
		return fail("not a regular file")
	case fi.Size() > MaxFile:
		return fail("%s is more than the %s a mention may attach; ask the model to read the part you need", Size(fi.Size()), Size(MaxFile))
	}
	f, err := os.Open(real)
	if err != nil {
		return fail("%v", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFile+1))
	if err != nil {
		return fail("%v", err)
	}
	if isImageName(rel) || looksLikeImage(data) {
		return image(mention, rel, data)
	}
	head := data
	if len(head) > 8192 {
		head = head[:8192]
	}
	if bytes.IndexByte(head, 0) >= 0 || !utf8.Valid(trimPartialRune(head)) {
		return fail("a binary file; only text files and PNG, JPEG, GIF or WebP images can be attached")
	}
	note := fmt.Sprintf("attached %s (%s)", rel, Size(int64(len(data))))
	body := string(data)
	cut := ""
	if len(data) > MaxText {
		body = string(trimPartialRune(data[:MaxText]))
		cut = fmt.Sprintf("\n[cut: only the first %s of %s were attached]", Size(MaxText), Size(int64(len(data))))
		note = fmt.Sprintf("attached the first %s of %s (%s)", Size(MaxText), rel, Size(int64(len(data))))
	}
	text := fmt.Sprintf("<file path=%q>\n%s%s\n</file>", rel, strings.TrimRight(body, "\n"), cut)
	return Attachment{Mention: mention, Kind: "file", Note: note, Text: text}, nil
}

func listing(dir, rel, mention string) (Attachment, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return Attachment{}, &Error{Mention: mention, Reason: err.Error()}
	}
	var names []string
	for _, e := range entries {
		if e.Name() == ".git" {
			continue
		}
		n := e.Name()
		if e.IsDir() {
			n += "/"
		}
		names = append(names, n)
	}
	sort.Strings(names)
	more := ""
	if len(names) > maxListing {
		more = fmt.Sprintf("\n[%d more entries not listed]", len(names)-maxListing)
		names = names[:maxListing]
	}
	if rel == "." {
		rel = "./"
	} else {
		rel += "/"
	}
	text := fmt.Sprintf("<directory path=%q>\n%s%s\n</directory>", rel, strings.Join(names, "\n"), more)
	return Attachment{Mention: mention, Kind: "directory", Note: fmt.Sprintf("attached the listing of %s (%d entries)", rel, len(entries)), Text: text}, nil
}

func within(root, p string) bool {
	r, err := filepath.Rel(root, p)
	return err == nil && r != ".." && !strings.HasPrefix(r, "../") && !filepath.IsAbs(r)
}

// trimPartialRune drops an incomplete UTF-8 sequence at the end of b (a
// cut in the middle of a character).
func trimPartialRune(b []byte) []byte {
	for i := 0; i < 3 && len(b) > 0; i++ {
		r, n := utf8.DecodeLastRune(b)
		if r != utf8.RuneError || n != 1 {
			break
		}
		b = b[:len(b)-1]
	}
	return b
}

// Size is a byte count people read at a glance.
func Size(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d bytes", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	case n < 1<<30:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.1f GB", float64(n)/(1<<30))
}

// Compose is the prompt the model gets: the text as typed, then each
// attachment's block.
func Compose(prompt string, atts []Attachment) string {
	var b strings.Builder
	b.WriteString(prompt)
	for _, a := range atts {
		if a.Text == "" {
			continue
		}
		b.WriteString("\n\n")
		b.WriteString(a.Text)
	}
	return b.String()
}

var imageTypes = map[string]string{".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif", ".webp": "image/webp"}

func isImageName(name string) bool {
	_, ok := imageTypes[strings.ToLower(filepath.Ext(name))]
	return ok
}

func looksLikeImage(data []byte) bool {
	switch http.DetectContentType(data) {
	case "image/png", "image/jpeg", "image/gif", "image/webp":
		return true
	}
	return false
}

// image checks that data is a PNG, JPEG, GIF or WebP image (by its bytes,
// not its name).
func image(mention, rel string, data []byte) (Attachment, error) {
	mt := http.DetectContentType(data)
	switch mt {
	case "image/png", "image/jpeg", "image/gif", "image/webp":
	default:
		return Attachment{}, &Error{Mention: mention, Reason: "named like an image but not a PNG, JPEG, GIF or WebP image"}
	}
	return Attachment{Mention: mention, Kind: "image", Image: data, MediaType: mt,
		Note: fmt.Sprintf("attached image %s (%s, %s)", rel, mt, Size(int64(len(data))))}, nil
}
