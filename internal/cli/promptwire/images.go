package promptwire

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/attach"
	"github.com/tiny-agent/tiny-go/internal/provider"
	"github.com/tiny-agent/tiny-go/internal/session"
	"github.com/tiny-agent/tiny-go/internal/store"
)

// Attached images live content-addressed in .tiny-agent/images/ (a user
// message's content is a string in the shared session format, so the
// message names the image and the bytes stay beside the sessions). Every
// session of the directory reads the same files, so a resume, a fork and
// a rewind keep their images without copying them.
const imagesDir = "images"

// StoreImage is what an @image mention goes through: checked, brought
// within the providers' limits, kept under its digest in cwd's images
// directory; the returned text names it in the prompt.
func StoreImage(cwd string, att attach.Attachment) (string, error) {
	img, err := attach.PrepareImage(att.MediaType, att.Image)
	if err != nil {
		return "", err
	}
	dir, err := store.StateDir(cwd, imagesDir, true)
	if err != nil {
		return "", fmt.Errorf("cannot keep the image: %w", err)
	}
	// The same bytes may be kept already: the name is their digest.
	if err := store.WriteNewFile(dir, img.Name, img.Data); err != nil && !errors.Is(err, os.ErrExist) {
		return "", fmt.Errorf("cannot keep the image: %w", err)
	}
	return attach.ImageRef(img, att.Mention), nil
}

// ImageLoader returns the images a user message names, read from the
// images directory of Cwd (a name whose file is missing is sent as text
// only); its Images is the agent's Config.Images.
type ImageLoader struct {
	Cwd   string
	mu    sync.Mutex
	cache map[string][]byte
}

func (l *ImageLoader) Images(text string) []provider.Image {
	names := attach.ImageRefs(text)
	if len(names) == 0 {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cache == nil {
		l.cache = map[string][]byte{}
	}
	var out []provider.Image
	for _, n := range names {
		data, ok := l.cache[n]
		if !ok {
			data = readImage(l.Cwd, n)
			if data == nil {
				continue
			}
			l.cache[n] = data
		}
		out = append(out, provider.Image{MediaType: attach.MediaTypeOf(n), Data: data})
	}
	return out
}

func readImage(cwd, name string) []byte {
	dir, err := store.StateDir(cwd, imagesDir, false)
	if err != nil {
		return nil
	}
	f, err := store.OpenSidecarFile(dir, name, os.O_RDONLY)
	if err != nil {
		return nil
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, 64<<20))
	if err != nil {
		return nil
	}
	return data
}

// ImageRejected handles a run the model failed while the conversation
// holds images and images are sent (sending): the session goes on with
// images as their text references only, and the failure says so.
// textOnly puts in place an agent that sends none, so the next request
// does not fail the same way; state is the session's, read only when the
// failure names an image.
func ImageRejected(res agent.Result, sending bool, state func() *session.State, textOnly func() error) agent.Result {
	if res.Outcome != session.OutcomeFailed || res.Error == nil || !sending ||
		!strings.Contains(strings.ToLower(res.Error.Message), "image") || !holdsImages(state()) {
		return res
	}
	if textOnly() != nil {
		return res
	}
	e := *res.Error
	e.Message += " — the model did not take the image; from now on this session sends images as their text reference only (/model switches to a model that accepts images)"
	res.Error = &e
	return res
}

func holdsImages(st *session.State) bool {
	for _, m := range st.ActiveContext {
		if m.Role == session.RoleUser && m.Content != nil && len(attach.ImageRefs(*m.Content)) > 0 {
			return true
		}
	}
	return false
}
