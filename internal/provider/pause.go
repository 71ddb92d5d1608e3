package provider

import (
	"context"
	"errors"
	"fmt"
	"slices"
)

// MaxPauseTurns bounds how often one reply that the server paused
// (Anthropic's pause_turn: a long server-side step) is continued.
const MaxPauseTurns = 5

// Stream sends one request and reads the reply. See Provider.
//
// A reply the server paused is continued here, as the provider asks: the
// request is sent again with the partial reply appended as the assistant's
// message, and the replies are joined into one Response (their text, calls,
// reasoning details and usage), up to MaxPauseTurns continuations. To the
// agent it stays one model request.
func (c *Client) Stream(ctx context.Context, req Request, onDelta func(Delta)) (Response, error) {
	var done Response
	for turn := 0; ; turn++ {
		part, err := c.streamOnce(ctx, req, onDelta)
		resp := part
		if turn > 0 {
			resp, err = joinPaused(done, part, err)
		}
		if err != nil || resp.FinishReason != FinishPause {
			return resp, err
		}
		if turn == MaxPauseTurns {
			u := resp.Usage
			return Response{}, &Error{Kind: KindUnsupportedFinishReason, Usage: &u,
				Message: fmt.Sprintf("the provider paused the reply %d times (pause_turn); it was not continued further", turn+1)}
		}
		done = resp
		// Only the new part is sent back: the earlier ones are already in
		// the request. The caller's slice is never appended to.
		req.Messages = append(slices.Clip(req.Messages), Message{
			Role: RoleAssistant, Content: part.Content, ToolCalls: part.ToolCalls, ReasoningDetails: part.ReasoningDetails,
		})
	}
}

// joinPaused joins a continuation onto the reply it continued. Usage adds
// up, so a failed continuation still reports what the paused turns used.
func joinPaused(prev, next Response, err error) (Response, error) {
	if err != nil {
		var pe *Error
		if errors.As(err, &pe) {
			u := prev.Usage
			if pe.Usage != nil {
				u = addUsage(u, *pe.Usage)
			}
			pe.Usage = &u
		}
		return Response{}, err
	}
	out := next
	out.Usage = addUsage(prev.Usage, next.Usage)
	out.ToolCalls = append(slices.Clip(prev.ToolCalls), next.ToolCalls...)
	switch {
	case prev.Content == nil:
	case next.Content == nil:
		out.Content = prev.Content
	default:
		s := *prev.Content + *next.Content
		out.Content = &s
	}
	out.ReasoningDetails = joinArrays(prev.ReasoningDetails, next.ReasoningDetails)
	out.Sources = append(slices.Clip(prev.Sources), next.Sources...)
	return out, nil
}

func addUsage(a, b Usage) Usage {
	out := Usage{Input: a.Input + b.Input, Output: a.Output + b.Output, CacheRead: a.CacheRead + b.CacheRead,
		CacheWrite: a.CacheWrite + b.CacheWrite, PromptTokens: b.PromptTokens, Reasoning: a.Reasoning + b.Reasoning}
	if a.Cost != nil || b.Cost != nil {
		var c float64
		for _, p := range []*float64{a.Cost, b.Cost} {
			if p != nil {
				c += *p
			}
		}
		out.Cost = &c
	}
	return out
}

// joinArrays concatenates two JSON arrays, either possibly nil.
func joinArrays(a, b []byte) []byte {
	switch {
	case len(a) == 0:
		return b
	case len(b) == 0:
		return a
	}
	inner := b[1:]
	if len(inner) > 0 && inner[0] == ']' {
		return a
	}
	if a[len(a)-2] == '[' {
		return b
	}
	out := append(slices.Clip(a[:len(a)-1]), ',')
	return append(out, inner...)
}
