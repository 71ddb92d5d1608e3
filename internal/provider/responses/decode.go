package responses

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/tiny-agent/tiny-go/internal/provider"
)

// item accumulates one output item.
type item struct {
	head Item
	raw  jsontext.Value // the whole item of output_item.done, as received
	text strings.Builder
	args strings.Builder
	// refusal is the refusal text of a message item.
	refusal strings.Builder
	done    bool
}

// decoder turns the events of one reply into a Response.
type decoder struct {
	apiKey  string
	onDelta func(provider.Delta)
	items   map[int]*item
	// begun is set once output arrived: an error after it is never
	// retried (the reply had begun).
	begun bool
	final *Response // the response of the terminal event
	kind  string    // the terminal event's type
}

// readStream reads an SSE reply up to its terminal event
// (response.completed, response.incomplete or response.failed) or an
// error event; there is no "[DONE]".
func readStream(r io.Reader, apiKey string, onDelta func(provider.Delta)) (provider.Response, error) {
	d := &decoder{apiKey: apiKey, onDelta: onDelta, items: map[int]*item{}}
	err := provider.ReadEvents(r, func(data []byte) (bool, error) {
		if err := d.event(data); err != nil {
			return false, err
		}
		return d.final != nil, nil
	})
	if err != nil {
		return provider.Response{}, err
	}
	return d.result()
}

// event applies one event.
func (d *decoder) event(data []byte) error {
	var ev Event
	if err := json.Unmarshal(data, &ev); err != nil {
		return provider.Malformed("an invalid stream event")
	}
	switch ev.Type {
	case "response.output_item.added", "response.output_item.done":
		d.begun = true
		return d.itemEvent(ev, ev.Type == "response.output_item.done")
	case "response.output_text.delta":
		return d.delta(ev, "message", func(it *item) { it.text.WriteString(ev.Delta) }, provider.Delta{Content: ev.Delta})
	case "response.refusal.delta":
		return d.delta(ev, "message", func(it *item) { it.refusal.WriteString(ev.Delta) }, provider.Delta{Content: ev.Delta})
	case "response.function_call_arguments.delta":
		return d.delta(ev, "function_call", func(it *item) { it.args.WriteString(ev.Delta) }, provider.Delta{})
	case "response.reasoning_summary_text.delta", "response.reasoning_text.delta":
		return d.delta(ev, "reasoning", func(*item) {}, provider.Delta{Reasoning: ev.Delta})
	case "response.completed", "response.incomplete", "response.failed":
		if ev.Response == nil {
			return provider.Malformed(ev.Type + " without a response")
		}
		d.final, d.kind = ev.Response, ev.Type
	case "error":
		return d.streamError(ev)
	default:
		// response.created, *.done, content parts and new event types:
		// nothing to take from them that the events above do not carry.
	}
	return nil
}

// itemEvent starts an item (added) or settles it whole (done).
func (d *decoder) itemEvent(ev Event, done bool) error {
	if ev.OutputIndex == nil || *ev.OutputIndex < 0 {
		return provider.Malformed("an output item without an index")
	}
	var head Item
	if err := json.Unmarshal(ev.Item, &head); err != nil {
		return provider.Malformed("an invalid output item")
	}
	it := d.items[*ev.OutputIndex]
	if it == nil {
		it = &item{}
		d.items[*ev.OutputIndex] = it
	}
	it.head = head
	if done {
		it.raw, it.done = bytes.Clone(ev.Item), true
	}
	return nil
}

// delta applies a streamed piece to its item and shows it. A server that
// streams pieces without announcing their item first gets one of the
// type the piece belongs to, so its text is not lost.
func (d *decoder) delta(ev Event, typ string, apply func(*item), show provider.Delta) error {
	d.begun = true
	if ev.OutputIndex == nil {
		return provider.Malformed(ev.Type + " without an output index")
	}
	it := d.items[*ev.OutputIndex]
	if it == nil {
		it = &item{head: Item{Type: typ}}
		d.items[*ev.OutputIndex] = it
	}
	apply(it)
	if d.onDelta != nil && (show.Content != "" || show.Reasoning != "") {
		d.onDelta(show)
	}
	return nil
}

// result settles the reply from its terminal event.
func (d *decoder) result() (provider.Response, error) {
	f := d.final
	usage := d.usage(f)
	if d.kind == "response.failed" || f.Status == "failed" {
		e := d.apiError(f.Error)
		e.Usage = &usage
		return provider.Response{}, e
	}
	d.fromOutput(f.Output)
	r, refused := d.assemble()
	r.Usage = usage
	switch {
	case f.Status == "incomplete" || d.kind == "response.incomplete":
		reason := ""
		if f.IncompleteDetails != nil {
			reason = f.IncompleteDetails.Reason
		}
		switch reason {
		case "max_output_tokens":
			r.FinishReason = provider.FinishLength
		case "content_filter":
			r.FinishReason, r.StopDetail = provider.FinishRefusal, reason
		default:
			return provider.Response{}, &provider.Error{Kind: provider.KindUnsupportedFinishReason, Usage: &usage,
				Message: fmt.Sprintf("provider finished with unsupported reason %q", provider.Sanitize(reason, d.apiKey, 40))}
		}
	case refused:
		r.FinishReason, r.StopDetail = provider.FinishRefusal, "refusal"
	case len(r.ToolCalls) > 0:
		r.FinishReason = provider.FinishToolUse
	default:
		r.FinishReason = provider.FinishStop
	}
	return r, nil
}

// fromOutput completes the items from the terminal response's output:
// those the stream never settled with output_item.done (or never
// announced at all: servers that send the result whole) are taken as
// given there.
func (d *decoder) fromOutput(output []jsontext.Value) {
	for i, raw := range output {
		if it := d.items[i]; it != nil && it.done {
			continue
		}
		var head Item
		if json.Unmarshal(raw, &head) != nil {
			continue
		}
		it := d.items[i]
		if it == nil {
			it = &item{}
			d.items[i] = it
		}
		it.head, it.raw, it.done = head, bytes.Clone(raw), true
	}
}

// assemble builds the reply from the items in output order. The kept
// items (ReasoningDetails) are the reasoning and native call items raw,
// and stand-ins for message and function call items that mark their
// place, so they go back in the order the model produced them.
func (d *decoder) assemble() (provider.Response, bool) {
	indices := make([]int, 0, len(d.items))
	for i := range d.items {
		indices = append(indices, i)
	}
	sort.Ints(indices)
	var r provider.Response
	var text strings.Builder
	var kept [][]byte
	keep, refused := false, false
	wholeMessages := d.citing(indices)
	for _, i := range indices {
		it := d.items[i]
		switch typ := it.head.Type; {
		case typ == "reasoning":
			if it.raw != nil {
				kept, keep = append(kept, it.raw), true
			}
		case typ == "message":
			t, ref, whole := it.message()
			if whole && d.onDelta != nil && t+ref != "" {
				d.onDelta(provider.Delta{Content: t + ref}) // shown as given
			}
			text.WriteString(t)
			if ref != "" {
				text.WriteString(ref)
				refused = true
			}
			if wholeMessages && it.raw != nil {
				kept, keep = append(kept, it.raw), true
				r.Sources = appendSources(r.Sources, it.head)
				continue
			}
			kept = append(kept, []byte(`{"type":"message"}`))
		case typ == webSearchCall && it.raw != nil:
			kept, keep = append(kept, it.raw), true
		case typ == "function_call":
			args := it.args.String()
			if it.done || args == "" {
				args = it.head.Arguments
			}
			r.ToolCalls = append(r.ToolCalls, provider.ToolCall{ID: it.head.CallID, Name: it.head.Name, Arguments: args})
			stand, _ := json.Marshal(struct {
				Type   string `json:"type"`
				CallID string `json:"call_id"`
			}{"function_call", it.head.CallID})
			kept = append(kept, stand)
		case isNative(typ) && it.raw != nil:
			r.ToolCalls = append(r.ToolCalls, nativeCall(it.head))
			kept, keep = append(kept, it.raw), true
		}
	}
	if text.Len() > 0 {
		s := text.String()
		r.Content = &s
	}
	if keep {
		r.ReasoningDetails = append(append([]byte{'['}, bytes.Join(kept, []byte{','})...), ']')
	}
	return r, refused
}

// message is a message item's text and refusal: as streamed, or from the
// whole item when nothing was streamed (whole).
func (it *item) message() (text, refusal string, whole bool) {
	text, refusal = it.text.String(), it.refusal.String()
	if text != "" || refusal != "" {
		return text, refusal, false
	}
	var t, ref strings.Builder
	for _, p := range it.head.Content {
		switch p.Type {
		case "output_text":
			t.WriteString(p.Text)
		case "refusal":
			ref.WriteString(p.Refusal)
		}
	}
	return t.String(), ref.String(), true
}

// usage normalizes as runtime.md §1 means it: input_tokens include the
// cached part; reasoning tokens are part of output_tokens.
func (d *decoder) usage(f *Response) provider.Usage {
	if f.Usage == nil {
		return provider.Usage{}
	}
	u := f.Usage
	cached := min(max(0, u.InputTokensDetails.CachedTokens), max(0, u.InputTokens))
	out := provider.Usage{
		Input:        u.InputTokens - cached,
		CacheRead:    cached,
		Output:       u.OutputTokens,
		PromptTokens: u.InputTokens,
		Reasoning:    u.OutputTokensDetails.ReasoningTokens,
	}
	out.Cost = Price(f.Model, out)
	return out
}

// streamError is an "error" event.
func (d *decoder) streamError(ev Event) error {
	e := &APIError{Code: ev.Code, Message: ev.Message}
	if ev.Error != nil {
		e = ev.Error
	}
	return d.apiError(e)
}

// apiError classifies an error event or a failed response: a rate limit,
// an overload or a server error before any output may be sent again;
// insufficient_quota and invalid requests are final; a prompt too long
// compacts.
func (d *decoder) apiError(e *APIError) *provider.Error {
	pe := &provider.Error{Kind: provider.KindProviderError, Message: "provider reported an error"}
	if e == nil {
		return pe
	}
	code := e.Type
	var s string
	if json.Unmarshal(e.Code, &s) == nil && s != "" {
		code = s
	}
	if c := provider.Sanitize(code, d.apiKey, 40); c != "" {
		pe.Message += " (" + c + ")"
	}
	if msg := provider.Sanitize(e.Message, d.apiKey, 200); msg != "" {
		pe.Message += ": " + msg
	}
	switch code {
	case "rate_limit_exceeded", "rate_limit_error":
		pe.Kind, pe.Status = provider.KindRateLimited, http.StatusTooManyRequests
	case "insufficient_quota":
		pe.Kind = provider.KindQuota
	case "server_error", "internal_error", "api_error":
		pe.Status = http.StatusInternalServerError
	case "server_is_overloaded", "overloaded", "overloaded_error", "slow_down":
		pe.Status = http.StatusServiceUnavailable
	case "context_length_exceeded":
		pe.Kind = provider.KindContextOverflow
	}
	pe.Retryable = pe.Status != 0 && !d.begun
	return pe
}
