// Package providertest is a scripted OpenAI-compatible Chat Completions
// server on loopback, for tests of provider clients and of programs that
// use one.
//
// Replies are consumed in order, one per POST to a path ending in
// /chat/completions; every request is recorded. When the script is
// exhausted the server answers HTTP 500 with the body "script exhausted".
//
//	srv := providertest.New(t, providertest.Reply{Text: "hello"})
//	// point the client (TINY_ENDPOINT) at srv.URL()
//	srv.Requests()[0].Chat.Messages
//
// A test that runs the program under test as a subprocess can start the
// server in-process with New and pass srv.URL() in the environment. To run
// the server itself in another process, write a script file (see
// ParseScript) and call Serve from that process.
package providertest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// maxRequestBody bounds a recorded request body.
const maxRequestBody = 32 << 20

// Server is a scripted server. Its methods are safe for concurrent use.
type Server struct {
	url     string
	http    *http.Server
	closing chan struct{}

	mu           sync.Mutex
	closed       bool
	handlers     sync.WaitGroup
	replies      []Reply
	requests     []Request
	disconnected map[int]chan struct{}
	// models is the body of GET .../models (404 when empty); modelLists
	// counts those requests, which are not recorded in requests.
	models     []byte
	modelLists int
	// respond answers when no scripted reply is pending (see Respond).
	respond func(Request) Reply
}

// New starts a server on 127.0.0.1 with an initial script and closes it
// when the test ends.
func New(t testing.TB, replies ...Reply) *Server {
	t.Helper()
	s, err := Start("127.0.0.1:0", replies...)
	if err != nil {
		t.Fatalf("providertest: %v", err)
	}
	t.Cleanup(s.Close)
	return s
}

// Start starts a server listening on addr (such as "127.0.0.1:0"). The
// caller must Close it.
func Start(addr string, replies ...Reply) (*Server, error) {
	for i, r := range replies {
		if err := r.validate(); err != nil {
			return nil, fmt.Errorf("reply %d: %w", i, err)
		}
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	s := &Server{
		url:          "http://" + l.Addr().String() + "/v1",
		closing:      make(chan struct{}),
		replies:      replies,
		disconnected: make(map[int]chan struct{}),
	}
	s.http = &http.Server{Handler: http.HandlerFunc(s.serveHTTP), ReadHeaderTimeout: 10 * time.Second}
	go s.http.Serve(l)
	return s, nil
}

// Serve runs a server on addr until ctx is done, then closes it. ready,
// if not nil, is called with the base URL once the server accepts
// requests; a helper process typically prints it for its parent.
func Serve(ctx context.Context, addr string, script []Reply, ready func(baseURL string)) error {
	s, err := Start(addr, script...)
	if err != nil {
		return err
	}
	defer s.Close()
	if ready != nil {
		ready(s.URL())
	}
	<-ctx.Done()
	return nil
}

// URL returns the base URL, "http://127.0.0.1:<port>/v1", to use as the
// client's endpoint (the client appends /chat/completions).
func (s *Server) URL() string { return s.url }

// Enqueue appends replies to the script. It panics on an invalid reply,
// which is a bug in the test.
func (s *Server) Enqueue(replies ...Reply) {
	for i, r := range replies {
		if err := r.validate(); err != nil {
			panic(fmt.Sprintf("providertest: reply %d: %v", i, err))
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.replies = append(s.replies, replies...)
}

// Pending returns the number of replies not yet used.
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.replies)
}

// Requests returns a copy of the requests received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Request, len(s.requests))
	for i, r := range s.requests {
		r.Header = r.Header.Clone()
		r.Body = bytes.Clone(r.Body)
		out[i] = r
	}
	return out
}

// Disconnected returns a channel that is closed once the client of request
// i (counting from 0, as in Requests) goes away before its reply is
// complete: while a reply hangs, is delayed, or is being written. Request i
// need not have arrived yet.
func (s *Server) Disconnected(i int) <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.disconnectedLocked(i)
}

func (s *Server) disconnectedLocked(i int) chan struct{} {
	c, ok := s.disconnected[i]
	if !ok {
		c = make(chan struct{})
		s.disconnected[i] = c
	}
	return c
}

// Close stops the server, drops open connections (ending hanging replies)
// and waits for the handlers to return.
func (s *Server) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	close(s.closing)
	s.mu.Unlock()
	s.http.Close()
	s.handlers.Wait()
}

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		http.Error(w, "server closed", http.StatusServiceUnavailable)
		return
	}
	s.handlers.Add(1)
	s.mu.Unlock()
	defer s.handlers.Done()
	if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/models") {
		s.serveModels(w)
		return
	}

	// Read the whole body first: net/http notices a client that goes
	// away only once the body is consumed.
	body, err := io.ReadAll(io.LimitReader(r.Body, maxRequestBody))
	if err != nil {
		http.Error(w, "reading request body: "+err.Error(), http.StatusBadRequest)
		return
	}
	rec := Request{Method: r.Method, Path: r.URL.Path, RawQuery: r.URL.RawQuery, Header: r.Header.Clone(), Body: body}
	rec.Chat, rec.DecodeError = decodeChat(body)

	s.mu.Lock()
	index := len(s.requests)
	s.requests = append(s.requests, rec)
	var reply Reply
	var ok bool
	switch {
	case r.Method != http.MethodPost:
	case !isModelPath(r.URL.Path):
	case len(s.replies) > 0:
		reply, ok, s.replies = s.replies[0], true, s.replies[1:]
	}
	respond := s.respond
	s.mu.Unlock()
	if !ok && respond != nil && r.Method == http.MethodPost && isModelPath(r.URL.Path) {
		reply, ok = respond(rec), true
		if err := reply.validate(); err != nil {
			reply = Reply{Status: http.StatusInternalServerError, Body: "invalid responder reply: " + err.Error(), ContentType: "text/plain"}
		}
	}

	switch {
	case r.Method != http.MethodPost:
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	case !isModelPath(r.URL.Path):
		http.Error(w, "not found", http.StatusNotFound)
	case !ok:
		http.Error(w, "script exhausted", http.StatusInternalServerError)
	case reply.Handler != nil:
		r.Body = io.NopCloser(bytes.NewReader(body))
		reply.Handler(w, r)
	default:
		s.answer(w, r, index, reply, rec.Chat.Model)
	}
}

// answer writes a scripted reply.
func (s *Server) answer(w http.ResponseWriter, r *http.Request, index int, reply Reply, model string) {
	resp := build(reply, model)
	if strings.HasSuffix(r.URL.Path, "/messages") {
		resp = anthropicResponse(reply, model)
	}
	if strings.HasSuffix(r.URL.Path, "/responses") {
		resp = responsesResponse(reply, model)
	}
	if reply.Delay > 0 && !s.wait(r, index, time.After(reply.Delay)) {
		panic(http.ErrAbortHandler)
	}
	rc := http.NewResponseController(w)
	for i, ev := range resp.events {
		if (reply.Hang || reply.Cut) && i == reply.After {
			break
		}
		if i == 0 {
			if reply.RetryAfter != "" {
				w.Header().Set("Retry-After", reply.RetryAfter)
			}
			w.Header().Set("Content-Type", resp.contentType)
			w.Header().Set("Cache-Control", "no-cache")
			w.WriteHeader(resp.status)
		}
		if _, err := w.Write(ev); err != nil {
			s.markDisconnected(index)
			return
		}
		if err := rc.Flush(); err != nil {
			s.markDisconnected(index)
			return
		}
	}
	if reply.Hang {
		s.wait(r, index, nil)
	}
	if reply.Hang || reply.Cut {
		// Abort the connection without finishing the response, also when
		// the server closes during a hang; net/http does not log this
		// panic.
		panic(http.ErrAbortHandler)
	}
}

// wait blocks until done fires (true), or the client goes away or the
// server closes (false).
func (s *Server) wait(r *http.Request, index int, done <-chan time.Time) bool {
	select {
	case <-done:
		return true
	case <-s.closing:
		return false
	case <-r.Context().Done():
		s.markDisconnected(index)
		return false
	}
}

// markDisconnected records that the client of request index went away,
// unless the server is closing (which drops connections itself).
func (s *Server) markDisconnected(index int) {
	select {
	case <-s.closing:
		return
	default:
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.requests[index].Disconnected {
		return
	}
	s.requests[index].Disconnected = true
	close(s.disconnectedLocked(index))
}

// SetModels makes GET <URL>/models answer with an OpenAI-style model list
// naming each model with its context_length. Model-list requests are not
// recorded in Requests and consume no reply; ModelLists counts them.
func (s *Server) SetModels(contextLengths map[string]int64) {
	type model struct {
		ID            string `json:"id"`
		Object        string `json:"object"`
		ContextLength int64  `json:"context_length"`
	}
	var list struct {
		Object string  `json:"object"`
		Data   []model `json:"data"`
	}
	list.Object = "list"
	for id, n := range contextLengths {
		list.Data = append(list.Data, model{ID: id, Object: "model", ContextLength: n})
	}
	b := mustMarshal(list)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.models = b
}

// ModelLists returns how many model-list requests were served.
func (s *Server) ModelLists() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.modelLists
}

func (s *Server) serveModels(w http.ResponseWriter) {
	s.mu.Lock()
	s.modelLists++
	body := s.models
	s.mu.Unlock()
	if body == nil {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}

// isModelPath reports the paths replies answer: Chat Completions and
// Anthropic's Messages API.
func isModelPath(path string) bool {
	return strings.HasSuffix(path, "/chat/completions") || strings.HasSuffix(path, "/messages") || strings.HasSuffix(path, "/responses")
}

// Respond makes the server compute the reply of every request that finds
// no scripted reply pending, from the request itself (a long task whose
// number of requests is not known in advance). It is called from the
// server's goroutines, one request at a time per connection.
func (s *Server) Respond(f func(Request) Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.respond = f
}
