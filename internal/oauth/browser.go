package oauth

import (
	"context"
	"errors"
	"fmt"
	"html"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
)

// Browser shows an authorization URL to the user.
type Browser func(ctx context.Context, url string) error

// SystemBrowser runs $BROWSER with the URL when it is set, and always
// prints the URL to out, so a user without a browser here can open it
// elsewhere (the redirect still has to reach this machine's loopback).
func SystemBrowser(getenv func(string) string, out func(string)) Browser {
	return func(ctx context.Context, url string) error {
		out("Open this URL to sign in: " + url)
		b := getenv("BROWSER")
		if b == "" {
			return nil
		}
		// The URL comes from the authorization server, which a planted
		// .mcp.json can name: only a web address reaches the browser,
		// never an argument it would read as an option.
		if !strings.HasPrefix(url, "https://") && !strings.HasPrefix(url, "http://") {
			return fmt.Errorf("the sign-in URL %q is not an http(s) address; $BROWSER was not started", url)
		}
		cmd := exec.CommandContext(ctx, b, url)
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Start(); err != nil {
			return fmt.Errorf("starting $BROWSER: %w", err)
		}
		go cmd.Wait()
		return nil
	}
}

// MaxSignInWait bounds the wait for the browser to come back.
const MaxSignInWait = 5 * time.Minute

// loopback is the redirect target of the authorization code flow: a
// one-shot HTTP server on 127.0.0.1 (RFC 8252), started when the flow runs.
type loopback struct {
	port int

	mu   sync.Mutex
	held net.Listener // the port, kept from newLoopback until the flow runs
}

// newLoopback fixes the port now, since dynamic registration needs the
// redirect URI before the flow starts: the configured one, else a free
// one. With hold (`tiny-go mcp login`) the free port stays bound until the
// browser comes back, so no other program takes it in between.
func newLoopback(port int, hold bool) (*loopback, error) {
	if port != 0 {
		return &loopback{port: port}, nil
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("no loopback port for the sign-in redirect: %w", err)
	}
	lb := &loopback{port: l.Addr().(*net.TCPAddr).Port}
	if hold {
		lb.held = l
	} else {
		l.Close()
	}
	return lb, nil
}

func (l *loopback) url() string {
	return "http://127.0.0.1:" + strconv.Itoa(l.port) + "/callback"
}

// listen is the held listener the first time, a new one on the port after.
func (l *loopback) listen() (net.Listener, error) {
	l.mu.Lock()
	held := l.held
	l.held = nil
	l.mu.Unlock()
	if held != nil {
		return held, nil
	}
	return net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(l.port))
}

// fetcher opens the browser and waits for its redirect.
func (l *loopback) fetcher(browser Browser) auth.AuthorizationCodeFetcher {
	return func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
		ln, err := l.listen()
		if err != nil {
			return nil, fmt.Errorf("listening for the sign-in redirect: %w", err)
		}
		results := make(chan callback, 1)
		srv := &http.Server{Handler: l.handler(results), ReadHeaderTimeout: 10 * time.Second}
		go srv.Serve(ln)
		defer srv.Close()
		if browser != nil {
			if err := browser(ctx, args.URL); err != nil {
				return nil, err
			}
		}
		ctx, cancel := context.WithTimeout(ctx, MaxSignInWait)
		defer cancel()
		select {
		case r := <-results:
			return r.result, r.err
		case <-ctx.Done():
			return nil, fmt.Errorf("no sign-in within the wait: %w", ctx.Err())
		}
	}
}

type callback struct {
	result *auth.AuthorizationResult
	err    error
}

func (l *loopback) handler(results chan<- callback) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /callback", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		var cb callback
		if e := q.Get("error"); e != "" {
			cb.err = errors.New("the authorization server refused: " + e + describeOAuthError(q.Get("error_description")))
		} else {
			cb.result = &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if cb.err != nil {
			fmt.Fprintf(w, "<p>Sign-in failed: %s</p>", html.EscapeString(cb.err.Error()))
		} else {
			fmt.Fprint(w, "<p>Signed in to tiny-go. You can close this tab.</p>")
		}
		select {
		case results <- cb:
		default: // a second redirect: the first one counts
		}
	})
	return mux
}

func describeOAuthError(desc string) string {
	if desc == "" {
		return ""
	}
	if len(desc) > 200 {
		desc = desc[:200]
	}
	return " (" + desc + ")"
}
