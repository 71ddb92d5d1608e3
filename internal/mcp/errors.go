package mcp

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Error types of a failed connect, as the mcp.completed event names them.
const (
	ErrorTimeout          = "timeout"
	ErrorConnectionFailed = "connection_failed"
)

// ConnectError is a failed connect to one server. Cause is already
// sanitized: it never holds the token or a response body.
type ConnectError struct {
	Alias string
	Type  string // ErrorTimeout or ErrorConnectionFailed
	Cause string
}

func (e *ConnectError) Error() string { return "MCP " + e.Alias + ": " + e.Cause }

// maxCauseLen bounds the part of a cause that comes from elsewhere.
const maxCauseLen = 200

// describe turns a failure into a short, safe cause. It prefers what the
// transport observed (status, oversize) over SDK error text, and scrubs the
// token from anything it does quote.
func describe(err error, obs *observation, timeout time.Duration, token string) string {
	status, tooLarge := obs.snapshot()
	var dnsErr *net.DNSError
	var opErr *net.OpError
	var certErr *tls.CertificateVerificationError
	var authorityErr x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var urlErr *url.Error
	switch {
	case tooLarge:
		return errResponseTooLarge.Error()
	case errors.Is(err, context.DeadlineExceeded):
		return "timed out after " + timeout.String()
	case status != 0:
		return fmt.Sprintf("HTTP %d %s", status, http.StatusText(status))
	case errors.As(err, &dnsErr):
		return "cannot resolve host " + clean(dnsErr.Name, token)
	case errors.As(err, &certErr), errors.As(err, &authorityErr), errors.As(err, &hostErr):
		return "TLS certificate not trusted"
	case errors.As(err, &opErr):
		return "cannot connect: " + clean(opErr.Err.Error(), token)
	}
	if rpcErr := serverError(err); rpcErr != nil {
		return fmt.Sprintf("server error %d: %s", rpcErr.Code, clean(rpcErr.Message, token))
	}
	if errors.As(err, &urlErr) {
		return clean(urlErr.Err.Error(), token)
	}
	return clean(err.Error(), token)
}

// clean makes foreign text safe for one line: the token is redacted,
// control characters become spaces, and the length is bounded.
func clean(s, token string) string {
	if token != "" {
		s = strings.ReplaceAll(s, token, "[redacted]")
	}
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
	if len(s) > maxCauseLen {
		cut := maxCauseLen
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

// serverError finds a JSON-RPC error the server sent. The SDK also wraps
// transport failures in its own "rejected by transport" error (code
// -32005), which says nothing about the server and is skipped.
func serverError(err error) *jsonrpc.Error {
	for _, e := range unwrapAll(err) {
		if rpcErr, ok := e.(*jsonrpc.Error); ok && !(rpcErr.Code == -32005 && rpcErr.Message == "rejected by transport") {
			return rpcErr
		}
	}
	return nil
}

// unwrapAll lists err and everything it wraps, depth first.
func unwrapAll(err error) []error {
	if err == nil {
		return nil
	}
	out := []error{err}
	switch e := err.(type) {
	case interface{ Unwrap() error }:
		out = append(out, unwrapAll(e.Unwrap())...)
	case interface{ Unwrap() []error }:
		for _, inner := range e.Unwrap() {
			out = append(out, unwrapAll(inner)...)
		}
	}
	return out
}
