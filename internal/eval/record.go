package eval

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// RecordingVersion is the version of the recording format.
const RecordingVersion = 1

// Recording is the model exchange of one task: every request the agent
// sent (normalized) and the reply it got, in order. It is stored as
// <record dir>/<task>.json, indented so that a change reads well in a diff.
type Recording struct {
	Version int    `json:"version"`
	Task    string `json:"task"`
	// Endpoint is the base URL the exchange was recorded against (no
	// credentials); a replay configures it so that tiny-go builds the same
	// kind of request, but never contacts it.
	Endpoint string `json:"endpoint,omitzero"`
	// Provider is TINY_PROVIDER of the recording ("" for the default),
	// which a replay sets as well.
	Provider  string     `json:"provider,omitzero"`
	Exchanges []Exchange `json:"exchanges"`
}

// Exchange is one model request and its reply.
type Exchange struct {
	// Request is the request body with paths, secrets, elapsed times,
	// timestamps and UUIDs normalized.
	Request *node `json:"request"`
	// Response is the reply; nil when the request got no response at all
	// (TransportError).
	Response       *Response `json:"response,omitzero"`
	TransportError string    `json:"transportError,omitzero"`
}

// Response is a recorded HTTP reply. A streamed reply keeps its
// server-sent events one by one; any other body is Body (JSON) or Text.
type Response struct {
	Status      int    `json:"status"`
	ContentType string `json:"contentType,omitzero"`
	// RetryAfter is the Retry-After header, which decides how long a
	// retry waits.
	RetryAfter string   `json:"retryAfter,omitzero"`
	Events     []*Event `json:"events,omitzero"`
	Body       *node    `json:"body,omitzero"`
	Text       string   `json:"text,omitzero"`
	// Error is how reading the body ended when it did not end cleanly
	// (a cut stream); a replay ends the body with the same error.
	Error string `json:"error,omitzero"`
}

// Event is one server-sent event: an optional event name and one data
// line, either JSON (Data) or not (Text, such as "[DONE]"); any other block
// is kept as is (Raw). Partial marks a last block that the stream ended in
// the middle of.
type Event struct {
	Event   string `json:"event,omitzero"`
	Data    *node  `json:"data,omitzero"`
	Text    string `json:"text,omitzero"`
	Raw     string `json:"raw,omitzero"`
	Partial bool   `json:"partial,omitzero"`
}

// MarshalJSONTo and UnmarshalJSONFrom let a node be a field of the
// recording types with its member order kept.
func (n *node) MarshalJSONTo(enc *jsontext.Encoder) error { return n.write(enc) }

func (n *node) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	v, err := readNode(dec)
	if err != nil {
		return err
	}
	*n = *v
	return nil
}

// recordResponse turns a received reply into its recorded form,
// normalizing text with norm (paths and secrets; a reply keeps its other
// content exactly).
func recordResponse(status int, contentType string, body []byte, readErr error, norm *normalizer) *Response {
	r := &Response{Status: status, ContentType: contentType}
	if readErr != nil {
		r.Error = norm.text(readErr.Error())
	}
	if strings.HasPrefix(contentType, "text/event-stream") {
		r.Events = splitEvents(body, norm)
		return r
	}
	if t, err := parseTree(body); err == nil {
		t.mapStrings(nil, func(_ []string, s string) string { return norm.text(s) })
		r.Body = t
		return r
	}
	r.Text = norm.text(string(body))
	return r
}

// splitEvents cuts an SSE body into events.
func splitEvents(body []byte, norm *normalizer) []*Event {
	// SSE ends a line at CRLF, LF or a lone CR; one form keeps the
	// canonical stream stable when it is split again.
	text := strings.ReplaceAll(strings.ReplaceAll(string(body), "\r\n", "\n"), "\r", "\n")
	var events []*Event
	for text != "" {
		block, rest, complete := strings.Cut(text, "\n\n")
		text = rest
		if !complete {
			events = append(events, &Event{Raw: norm.text(block), Partial: true})
			break
		}
		events = append(events, parseEvent(block, norm))
	}
	return events
}

func parseEvent(block string, norm *normalizer) *Event {
	raw := &Event{Raw: norm.text(block)}
	lines := strings.Split(block, "\n")
	var name string
	if len(lines) == 2 {
		n, ok := strings.CutPrefix(lines[0], "event:")
		if !ok {
			return raw
		}
		name, lines = strings.TrimSpace(n), lines[1:]
	}
	if len(lines) != 1 {
		return raw
	}
	data, ok := strings.CutPrefix(lines[0], "data:")
	if !ok {
		return raw
	}
	data = strings.TrimPrefix(data, " ")
	if t, err := parseTree([]byte(data)); err == nil && t.kind != '"' {
		t.mapStrings(nil, func(_ []string, s string) string { return norm.text(s) })
		return &Event{Event: name, Data: t}
	}
	if !strings.ContainsAny(data, "\r\n") && !strings.HasPrefix(data, `"`) {
		return &Event{Event: name, Text: norm.text(data)}
	}
	return raw
}

// body rebuilds the bytes of a recorded reply for the run whose root
// and home directories are given.
func (r *Response) body(root, home string) ([]byte, error) {
	var b bytes.Buffer
	switch {
	case r.Events != nil:
		for _, e := range r.Events {
			switch {
			case e.Partial:
				b.WriteString(e.Raw)
			case e.Data != nil || e.Raw == "":
				if e.Event != "" {
					b.WriteString("event: " + e.Event + "\n")
				}
				data := []byte(e.Text)
				if e.Data != nil {
					var err error
					if data, err = e.Data.encode(); err != nil {
						return nil, err
					}
				}
				b.WriteString("data: ")
				b.Write(data)
				b.WriteString("\n\n")
			default:
				b.WriteString(e.Raw + "\n\n")
			}
		}
	case r.Body != nil:
		data, err := r.Body.encode()
		if err != nil {
			return nil, err
		}
		b.Write(data)
	default:
		b.WriteString(r.Text)
	}
	return []byte(restore(b.String(), root, home, true)), nil
}

// recordingOptions indent a stored recording.
func recordingOptions() json.Options {
	return json.JoinOptions(jsontext.Multiline(true), jsontext.WithIndent("  "), json.RejectUnknownMembers(true))
}

// LoadRecording reads <dir>/<task>.json.
func LoadRecording(dir, task string) (*Recording, error) {
	path := filepath.Join(dir, task+".json")
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("no recording for task %s (%s)", task, path)
		}
		return nil, err
	}
	var rec Recording
	if err := json.Unmarshal(data, &rec, recordingOptions()); err != nil {
		return nil, fmt.Errorf("recording %s: %w", path, err)
	}
	if rec.Version != RecordingVersion {
		return nil, fmt.Errorf("recording %s: version %d, want %d", path, rec.Version, RecordingVersion)
	}
	for i, e := range rec.Exchanges {
		if e.Request == nil || (e.Response == nil) == (e.TransportError == "") {
			return nil, fmt.Errorf("recording %s: exchange %d needs a request and either a response or a transportError", path, i+1)
		}
	}
	return &rec, nil
}

// WriteRecording stores rec as <dir>/<task>.json, replacing it
// atomically.
func WriteRecording(dir string, rec *Recording) error {
	data, err := json.Marshal(rec, recordingOptions())
	if err != nil {
		return err
	}
	data = append(data, '\n')
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+rec.Task+"-*.json")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), filepath.Join(dir, rec.Task+".json"))
}

// readExchanges reads the JSON Lines a recording child wrote.
func readExchanges(path string) ([]Exchange, error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	defer f.Close()
	var out []Exchange
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 256<<20)
	for sc.Scan() {
		var e Exchange
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		out = append(out, e)
	}
	return out, sc.Err()
}

// model is the model the recording's first request asked for.
func (r *Recording) model() string {
	if len(r.Exchanges) == 0 {
		return ""
	}
	return r.Exchanges[0].Request.get("model").str()
}
