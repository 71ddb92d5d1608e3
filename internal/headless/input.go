package headless

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Kind is what one input line is.
type Kind int

// The kinds of input line.
const (
	// KindUser is a user message: a prompt to run.
	KindUser Kind = iota + 1
	// KindControlRequest asks tiny-go to do something now (initialize,
	// interrupt, set_permission_mode, set_model, ...).
	KindControlRequest
	// KindControlResponse answers a request tiny-go made (can_use_tool).
	KindControlResponse
	// KindControlCancel withdraws a control request the SDK made.
	KindControlCancel
	// KindIgnored is a well-formed message tiny-go has no use for
	// (keep_alive, environment updates, types of newer SDKs).
	KindIgnored
)

// Line is one parsed input line.
type Line struct {
	Kind Kind
	// Type is the line's "type" member.
	Type     string
	User     *UserMessage
	Request  *ControlRequest
	Response *ControlResponse
	// CancelID is the request a control_cancel_request withdraws.
	CancelID string
}

// UserMessage is a prompt: its text blocks joined, and its images.
type UserMessage struct {
	Text   string
	Images []Image
}

// Image is one image block of a user message.
type Image struct {
	MediaType string
	Data      []byte
}

// ControlRequest is a request of the SDK. Body is the whole "request"
// object; its subtype decides what else it holds.
type ControlRequest struct {
	ID      string
	Subtype string
	Body    json.RawMessage
}

// ControlResponse answers a request of tiny-go.
type ControlResponse struct {
	ID string
	OK bool
	// Error is the SDK's message of a failed request.
	Error string
	// Body is the "response" object of a success.
	Body json.RawMessage
}

// maxImageBytes bounds one decoded image (providers take far less; the
// attach package scales images down).
const maxImageBytes = 32 << 20

// ParseLine parses one stream-json input line. An error says what is
// wrong with the line in one sentence.
func ParseLine(line []byte) (Line, error) {
	line = bytes.TrimSpace(line)
	var head struct {
		Type      string          `json:"type"`
		Message   json.RawMessage `json:"message"`
		RequestID *string         `json:"request_id"`
		Request   json.RawMessage `json:"request"`
		Response  json.RawMessage `json:"response"`
	}
	if len(line) == 0 || line[0] != '{' {
		return Line{}, errors.New("not a JSON object")
	}
	if err := json.Unmarshal(line, &head); err != nil {
		return Line{}, fmt.Errorf("not valid JSON: %w", err)
	}
	l := Line{Type: head.Type}
	switch head.Type {
	case "":
		return Line{}, errors.New(`no "type" member`)
	case "user":
		u, err := parseUser(head.Message)
		l.Kind, l.User = KindUser, u
		return l, err
	case "control_request":
		r, err := parseRequest(head.RequestID, head.Request)
		l.Kind, l.Request = KindControlRequest, r
		return l, err
	case "control_response":
		r, err := parseResponse(head.Response)
		l.Kind, l.Response = KindControlResponse, r
		return l, err
	case "control_cancel_request":
		if head.RequestID == nil || *head.RequestID == "" {
			return Line{}, errors.New("control_cancel_request without a request_id")
		}
		l.Kind, l.CancelID = KindControlCancel, *head.RequestID
		return l, nil
	}
	l.Kind = KindIgnored
	return l, nil
}

func parseUser(raw json.RawMessage) (*UserMessage, error) {
	var m struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if len(raw) == 0 || json.Unmarshal(raw, &m) != nil {
		return nil, errors.New(`a user message needs a "message" object`)
	}
	if m.Role != "user" {
		return nil, fmt.Errorf(`a user message's role must be "user", not %q`, m.Role)
	}
	var text string
	if json.Unmarshal(m.Content, &text) == nil {
		return &UserMessage{Text: text}, nil
	}
	var blocks []json.RawMessage
	if json.Unmarshal(m.Content, &blocks) != nil {
		return nil, errors.New("a user message's content must be a string or an array of content blocks")
	}
	u := &UserMessage{}
	var texts []string
	for i, b := range blocks {
		t, img, err := parseBlock(b)
		if err != nil {
			return nil, fmt.Errorf("content block %d: %w", i, err)
		}
		if img != nil {
			u.Images = append(u.Images, *img)
		} else {
			texts = append(texts, t)
		}
	}
	u.Text = strings.Join(texts, "\n\n")
	return u, nil
}

// parseBlock reads a text or image block.
func parseBlock(raw json.RawMessage) (string, *Image, error) {
	var b struct {
		Type   string  `json:"type"`
		Text   *string `json:"text"`
		Source *struct {
			Type      string `json:"type"`
			MediaType string `json:"media_type"`
			Data      string `json:"data"`
		} `json:"source"`
	}
	if json.Unmarshal(raw, &b) != nil {
		return "", nil, errors.New("not an object")
	}
	switch b.Type {
	case "text":
		if b.Text == nil {
			return "", nil, errors.New(`a text block needs "text"`)
		}
		return *b.Text, nil, nil
	case "image":
		if b.Source == nil || b.Source.Type != "base64" {
			return "", nil, errors.New(`an image block needs a base64 "source" (url and file sources are not supported)`)
		}
		if base64.StdEncoding.DecodedLen(len(b.Source.Data)) > maxImageBytes {
			return "", nil, fmt.Errorf("the image is larger than %d MB", maxImageBytes>>20)
		}
		data, err := base64.StdEncoding.DecodeString(b.Source.Data)
		if err != nil {
			return "", nil, errors.New("the image data is not valid base64")
		}
		return "", &Image{MediaType: b.Source.MediaType, Data: data}, nil
	}
	return "", nil, fmt.Errorf("blocks of type %q are not supported (text and image are)", b.Type)
}

func parseRequest(id *string, raw json.RawMessage) (*ControlRequest, error) {
	if id == nil || *id == "" {
		return nil, errors.New("control_request without a request_id")
	}
	var r struct {
		Subtype string `json:"subtype"`
	}
	if len(raw) == 0 || json.Unmarshal(raw, &r) != nil || r.Subtype == "" {
		return nil, errors.New(`control_request needs a "request" object with a subtype`)
	}
	return &ControlRequest{ID: *id, Subtype: r.Subtype, Body: raw}, nil
}

func parseResponse(raw json.RawMessage) (*ControlResponse, error) {
	var r struct {
		Subtype   string          `json:"subtype"`
		RequestID string          `json:"request_id"`
		Response  json.RawMessage `json:"response"`
		Error     string          `json:"error"`
	}
	if len(raw) == 0 || json.Unmarshal(raw, &r) != nil || r.RequestID == "" {
		return nil, errors.New(`control_response needs a "response" object with a request_id`)
	}
	switch r.Subtype {
	case "success":
		return &ControlResponse{ID: r.RequestID, OK: true, Body: r.Response}, nil
	case "error":
		return &ControlResponse{ID: r.RequestID, Error: r.Error}, nil
	}
	return nil, fmt.Errorf("control_response subtype must be success or error, not %q", r.Subtype)
}
