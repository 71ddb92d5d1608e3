package provider

import (
	"bytes"
	"errors"
	"io"
)

// errTooLarge is returned by limitedBody once the response exceeds its bound.
var errTooLarge = errors.New("provider response too large")

// limitedBody bounds a response body and reports read progress to the
// watchdog.
type limitedBody struct {
	r  io.Reader
	n  int64 // bytes still allowed; negative once exceeded
	wd *watchdog
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.n < 0 {
		return 0, errTooLarge
	}
	if int64(len(p)) > b.n+1 {
		p = p[:b.n+1] // one byte more than allowed detects the excess
	}
	n, err := b.r.Read(p)
	if n > 0 && b.wd != nil {
		b.wd.touch()
	}
	if int64(n) > b.n {
		b.n = -1
		return n - 1, errTooLarge
	}
	b.n -= int64(n)
	return n, err
}

func readAll(r io.Reader, limit int64) ([]byte, error) {
	return io.ReadAll(io.LimitReader(r, limit))
}

// ErrCut reports a stream that ended cleanly but early (every wire's
// decoder says it the same way).
func ErrCut() *Error {
	return &Error{Kind: KindConnectionFailed, Message: "provider stream ended before the reply finished"}
}

// Malformed reports a reply that breaks its wire's rules: "provider sent
// " + what.
func Malformed(what string) *Error {
	return &Error{Kind: KindMalformedResponse, Message: "provider sent " + what}
}

// readSSE reads a streamed reply up to "[DONE]" or the end of the body.
// Errors are *Error for protocol failures and read errors as they are.
func readSSE(r io.Reader, acc *accumulator) (Response, error) {
	s := newSSEReader(r)
	for {
		data, err := s.next()
		if err == io.EOF {
			if acc.finish == "" {
				return Response{}, ErrCut()
			}
			return acc.result()
		}
		if err != nil {
			return Response{}, err
		}
		data = bytes.TrimSpace(data)
		if len(data) == 0 {
			continue
		}
		if string(data) == "[DONE]" {
			return acc.result()
		}
		if err := acc.addChunk(data); err != nil {
			var pe *Error
			if s.partial && errors.As(err, &pe) && pe.Kind == KindMalformedResponse {
				return Response{}, ErrCut() // cut inside the last event
			}
			return Response{}, err
		}
	}
}

// readJSON reads a non-streaming chat.completion reply.
func readJSON(r io.Reader, acc *accumulator) (Response, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return Response{}, err
	}
	if err := acc.addMessage(b); err != nil {
		return Response{}, err
	}
	return acc.result()
}
