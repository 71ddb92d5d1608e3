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
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tiny-agent/tiny-go/internal/oauth"
	"github.com/tiny-agent/tiny-go/internal/secrets"
)

// Error types of a failed connect, as the mcp.completed event names them.
const (
	ErrorTimeout          = "timeout"
	ErrorConnectionFailed = "connection_failed"
)

// What tiny-go was doing when a server failed, as messages name it.
const (
	doingConnecting = "connecting"
	doingListing    = "listing tools"
)

// ConnectError is a failed connect to one server. Cause is already
// sanitized: it never holds the token or a response body.
type ConnectError struct {
	Alias string
	Type  string // ErrorTimeout or ErrorConnectionFailed
	// Doing is what tiny-go was doing: "starting <command>", "connecting"
	// or "listing tools".
	Doing string
	Cause string
}

func (e *ConnectError) Error() string {
	return "MCP " + e.Alias + ": " + e.Doing + ": " + e.Cause
}

// maxCauseLen bounds the part of a cause that comes from elsewhere.
const maxCauseLen = 200

// maxSignInLen bounds a sign-in failure.
const maxSignInLen = 500

// failure is what describe needs to know about a failed operation besides
// its error. Every field may be zero.
type failure struct {
	obs     *observation  // what the HTTP transport saw
	hs      *handshake    // what the connection saw
	proc    *stdioProcess // a stdio server's process
	step    string        // the JSON-RPC method whose reply was awaited
	timeout time.Duration
	token   string
}

// describe turns a failure into a short cause in plain words: what the
// transport or process observed (status, content type, oversize, exit)
// before anything from the SDK's error text, which reads as a chain of
// internal steps and may quote a server's response. The token is scrubbed
// from anything it does quote.
func describe(err error, f failure) string {
	seen := f.obs.snapshot()
	step := f.step
	if step == "" {
		step = "the request"
	}
	var dnsErr *net.DNSError
	var opErr *net.OpError
	var certErr *tls.CertificateVerificationError
	var authorityErr x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var urlErr *url.Error
	switch {
	case seen.tooLarge:
		return fmt.Sprintf("the reply to %s was larger than %d MB", step, MaxResponseBytes>>20)
	case seen.badType != nil:
		if *seen.badType == "" {
			return fmt.Sprintf("not an MCP server: the reply to %s had no content type", step)
		}
		return fmt.Sprintf("not an MCP server: the reply to %s was %s", step, clean(*seen.badType, f.token))
	case f.hs.sawGarbage():
		return "not an MCP server: it wrote something other than JSON-RPC to its stdout" + f.proc.seeLog()
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Sprintf("no reply to %s within %s", step, f.timeout)
	case errors.Is(err, context.Canceled):
		return "interrupted"
	case f.proc.exited():
		return fmt.Sprintf("the server exited (%s) before answering %s", f.proc.exitText(), step) + f.proc.seeLog()
	case seen.authErr != nil:
		var login *oauth.LoginNeededError
		if errors.As(seen.authErr, &login) {
			return login.Error()
		}
		// internal/oauth writes these lines itself (what to do comes
		// last) and bounds what it quotes from the servers.
		return "signing in: " + cleanLen(seen.authErr.Error(), f.token, maxSignInLen)
	case seen.status != 0:
		cause := fmt.Sprintf("the server answered %s with HTTP %d %s", step, seen.status, http.StatusText(seen.status))
		if seen.serverText != "" {
			cause += ": " + clean(seen.serverText, f.token)
		}
		return cause
	case errors.As(err, &dnsErr):
		return "cannot resolve host " + clean(dnsErr.Name, f.token)
	case errors.As(err, &certErr), errors.As(err, &authorityErr), errors.As(err, &hostErr):
		return "TLS certificate not trusted"
	case errors.As(err, &opErr):
		return "cannot connect: " + clean(innermost(opErr.Err).Error(), f.token)
	case errors.Is(err, sdk.ErrConnectionClosed) && f.proc != nil:
		return fmt.Sprintf("the server closed its stdout before answering %s", step) + f.proc.seeLog()
	}
	if rpcErr := serverError(err); rpcErr != nil {
		if rpcErr.Code == 0 {
			return fmt.Sprintf("the server answered %s with an error: %s", step, clean(rpcErr.Message, f.token))
		}
		return fmt.Sprintf("the server answered %s with error %d: %s", step, rpcErr.Code, clean(rpcErr.Message, f.token))
	}
	if errors.As(err, &urlErr) {
		return clean(urlErr.Err.Error(), f.token)
	}
	return clean(innermost(err).Error(), f.token)
}

// innermost is the error at the bottom of err's first chain: the cause
// itself, without the steps the SDK wrapped around it.
func innermost(err error) error {
	for {
		var next error
		switch e := err.(type) {
		case interface{ Unwrap() error }:
			next = e.Unwrap()
		case interface{ Unwrap() []error }:
			if inner := e.Unwrap(); len(inner) > 0 {
				next = inner[0]
			}
		}
		if next == nil {
			return err
		}
		err = next
	}
}

// clean makes foreign text safe for one line: the token is redacted,
// control characters become spaces, and the length is bounded.
func clean(s, token string) string {
	return cleanLen(s, token, maxCauseLen)
}

func cleanLen(s, token string, maxLen int) string {
	if secrets.Maskable(token) {
		s = strings.ReplaceAll(s, token, "[redacted]")
	}
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
	if len(s) > maxLen {
		cut := maxLen
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
