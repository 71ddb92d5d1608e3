package provider

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// accumulator builds a Response from stream chunks.
type accumulator struct {
	onDelta func(Delta)
	content strings.Builder
	calls   []ToolCall
	// pos maps a streamed tool call index to its position in calls.
	pos    map[int]int
	finish string
	usage  *ChatUsage
	// apiKey is scrubbed from error messages the provider sends.
	apiKey string
	// details are the streamed reasoning_details; wholeDetails those of a
	// non-streamed reply.
	details      detailMerger
	wholeDetails jsontext.Value
	// events counts the chunks applied: an error after the first one is
	// never retried (the reply had begun).
	events int
	// refused is set once refusal text arrived.
	refused bool
	// annotations are the reply's annotations, raw (annotations.go).
	annotations []jsontext.Value
}

func newAccumulator(apiKey string, onDelta func(Delta)) *accumulator {
	return &accumulator{onDelta: onDelta, pos: make(map[int]int), apiKey: apiKey}
}

// addChunk applies one chat.completion.chunk.
func (a *accumulator) addChunk(data []byte) error {
	var c ChatChunk
	if err := json.Unmarshal(data, &c); err != nil {
		return &Error{Kind: KindMalformedResponse, Message: "provider sent an invalid stream chunk"}
	}
	if c.Error != nil {
		e := streamError(c.Error, a.apiKey)
		classifyInStream(e, c.Error, a.events)
		a.billed(e, c.Usage)
		return e
	}
	a.events++
	if c.Usage != nil {
		a.usage = c.Usage
	}
	for _, ch := range c.Choices {
		if ch.Index != 0 {
			continue // tiny-go asks for one choice
		}
		if ch.Delta != nil {
			a.addReasoning(ch.Delta)
			a.addAnnotations(ch.Delta.Annotations)
			a.addText(ch.Delta.Content)
			a.addRefusal(ch.Delta.Refusal)
			for _, tc := range ch.Delta.ToolCalls {
				a.addToolCallDelta(tc)
			}
		}
		if ch.FinishReason != nil && *ch.FinishReason != "" {
			a.finish = *ch.FinishReason
		}
	}
	return nil
}

// billed gives a failed reply the usage the provider reported with the
// error (OpenRouter ends a stream that failed midway with {"error": ...,
// "usage": ...}), else the latest usage of the stream: the provider bills
// it, so it is recorded.
func (a *accumulator) billed(e *Error, u *ChatUsage) {
	if u == nil {
		u = a.usage
	}
	if u == nil {
		return
	}
	n := u.normalize()
	e.Usage = &n
}

// addMessage applies a non-streaming chat.completion body.
func (a *accumulator) addMessage(data []byte) error {
	var c ChatChunk
	if err := json.Unmarshal(data, &c); err != nil {
		return &Error{Kind: KindMalformedResponse, Message: "provider sent an invalid JSON reply"}
	}
	if c.Error != nil {
		e := streamError(c.Error, a.apiKey)
		classifyInStream(e, c.Error, 0)
		a.billed(e, c.Usage)
		return e
	}
	a.usage = c.Usage
	for _, ch := range c.Choices {
		if ch.Index != 0 {
			continue
		}
		if ch.Message != nil {
			if ch.Message.ReasoningDetails.Kind() == '[' {
				a.wholeDetails = bytes.Clone(ch.Message.ReasoningDetails)
			}
			a.addAnnotations(ch.Message.Annotations)
			a.addText(ch.Message.Content)
			a.addRefusal(ch.Message.Refusal)
			for _, tc := range ch.Message.ToolCalls {
				a.calls = append(a.calls, ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
			}
		}
		if ch.FinishReason != nil {
			a.finish = *ch.FinishReason
		}
	}
	if len(c.Choices) == 0 {
		return &Error{Kind: KindMalformedResponse, Message: "provider reply has no choices"}
	}
	return nil
}

func (a *accumulator) addText(s *string) {
	if s == nil || *s == "" {
		return
	}
	a.content.WriteString(*s)
	if a.onDelta != nil {
		a.onDelta(Delta{Content: *s})
	}
}

func (a *accumulator) addRefusal(s *string) {
	if s != nil && *s != "" {
		a.refused = true
		a.addText(s)
	}
}

// addToolCallDelta merges a streamed tool call fragment: the id and name
// arrive once, the arguments are concatenated. Servers that omit the index
// are handled by treating a fragment with a new id as a new call and any
// other fragment as a continuation of the last call.
func (a *accumulator) addToolCallDelta(d ChatToolCallDelta) {
	i, ok := -1, false
	if d.Index != nil {
		i, ok = a.pos[*d.Index]
	} else if n := len(a.calls); n > 0 && (d.ID == "" || d.ID == a.calls[n-1].ID) {
		i, ok = n-1, true
	}
	if !ok {
		i = len(a.calls)
		a.calls = append(a.calls, ToolCall{})
		if d.Index != nil {
			a.pos[*d.Index] = i
		}
	}
	c := &a.calls[i]
	if c.ID == "" {
		c.ID = d.ID
	}
	if c.Name == "" {
		c.Name = d.Function.Name
	}
	c.Arguments += d.Function.Arguments
}

// result settles the reply once the provider has finished.
func (a *accumulator) result() (Response, error) {
	var r Response
	switch a.finish {
	case "stop":
		r.FinishReason = FinishStop
		if a.refused {
			r.FinishReason, r.StopDetail = FinishRefusal, "refusal"
		}
	case "tool_calls", "function_call":
		r.FinishReason = FinishToolUse
	case "length":
		r.FinishReason = FinishLength
	case "content_filter":
		r.FinishReason, r.StopDetail = FinishRefusal, a.finish
	case "":
		return Response{}, &Error{Kind: KindMalformedResponse, Message: "provider reply has no finish reason"}
	default:
		u := a.usage.normalize()
		return Response{}, &Error{
			Kind:    KindUnsupportedFinishReason,
			Message: fmt.Sprintf("provider finished with unsupported reason %q", sanitize(a.finish, a.apiKey, 40)),
			Usage:   &u, // billed all the same
		}
	}
	for i := range a.calls {
		if a.calls[i].Name == "" {
			return Response{}, &Error{Kind: KindMalformedResponse, Message: "provider sent a tool call without a name"}
		}
		if a.calls[i].ID == "" {
			// A few local servers omit ids; the session needs one to pair
			// the call with its result.
			a.calls[i].ID = "call_" + rand.Text()
		}
	}
	if a.content.Len() > 0 {
		s := a.content.String()
		r.Content = &s
	}
	r.ToolCalls = a.calls
	r.Usage = a.usage.normalize()
	r.ReasoningDetails = a.wholeDetails
	if r.ReasoningDetails == nil {
		r.ReasoningDetails = a.details.result()
	}
	r.ReasoningDetails = withAnnotations(r.ReasoningDetails, a.annotations)
	r.Sources = annotationSources(a.annotations)
	return r, nil
}
