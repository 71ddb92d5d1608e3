package eval

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-json-experiment/json"
)

// Environment of a tiny-go process that an eval runs. They are not part
// of tiny-go's documented interface: the eval command sets them for the
// processes it starts.
const (
	// EnvRoot is the task's root directory (the working directory is
	// its repo/ folder); it is normalized in recordings. Without it the
	// process is not part of an eval.
	EnvRoot = "TINY_EVAL_ROOT"
	// EnvLog names the file the process reports its model requests to:
	// one line "sent" per HTTP request (so retries are counted), and
	// under replay one line "diverged: ..." at the first request that
	// differs from the recording.
	EnvLog = "TINY_EVAL_LOG"
	// EnvRecord names the JSON Lines file the model exchange is
	// appended to.
	EnvRecord = "TINY_EVAL_RECORD"
	// EnvReplay names the recording whose replies are served instead of
	// contacting the endpoint.
	EnvReplay = "TINY_EVAL_REPLAY"
)

// ChildHTTPClient is the HTTP client a tiny-go process started by an eval
// uses for model requests: one that counts them, and records the exchange
// or replays a recording without any network. It returns nil when the
// process is not part of an eval. secrets are values that must never be
// written to a recording.
func ChildHTTPClient(getenv func(string) string, secrets []string) (*http.Client, error) {
	root := getenv(EnvRoot)
	if root == "" {
		return nil, nil
	}
	record, replay, logPath := getenv(EnvRecord), getenv(EnvReplay), getenv(EnvLog)
	if record != "" && replay != "" {
		return nil, fmt.Errorf("%s and %s exclude each other", EnvRecord, EnvReplay)
	}
	if logPath == "" {
		return nil, fmt.Errorf("%s is not set", EnvLog)
	}
	home := getenv("HOME")
	norm := newNormalizer(rootSpellings(root), home, secrets)
	var rec *Recording
	if replay != "" {
		dir, name := filepath.Split(replay)
		var err error
		if rec, err = LoadRecording(dir, strings.TrimSuffix(name, ".json")); err != nil {
			return nil, err
		}
	}
	log, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("eval log: %w", err)
	}
	noRedirect := func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	if rec != nil {
		return &http.Client{Transport: &replayer{rec: rec, norm: norm, root: root, home: home, log: log}, CheckRedirect: noRedirect}, nil
	}
	base := http.DefaultTransport.(*http.Transport).Clone()
	base.DialContext = (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	r := &recorder{base: base, norm: norm, log: log}
	if record != "" {
		if r.out, err = os.OpenFile(record, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600); err != nil {
			log.Close()
			return nil, fmt.Errorf("eval record: %w", err)
		}
	}
	return &http.Client{Transport: r, CheckRedirect: noRedirect}, nil
}

// rootSpellings are the ways a root directory may appear: as given and
// with symlinks resolved (a temporary directory under a symlinked /tmp).
func rootSpellings(root string) []string {
	out := []string{root}
	if r, err := filepath.EvalSymlinks(root); err == nil && r != root {
		out = append(out, r)
	}
	return out
}

// readBody reads a request body and puts an equal one back.
func readBody(req *http.Request) ([]byte, error) {
	if req.Body == nil {
		return nil, nil
	}
	b, err := io.ReadAll(req.Body)
	req.Body.Close()
	if err != nil {
		return nil, err
	}
	req.Body = io.NopCloser(bytes.NewReader(b))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	return b, nil
}

// normalizedRequest is the normalized tree of a body, or a string node
// with the body when it is not JSON.
func normalizedRequest(norm *normalizer, body []byte) *node {
	t, err := norm.request(body)
	if err != nil {
		return &node{kind: '"', text: norm.text(string(body))}
	}
	return t
}

// recorder passes requests on and counts them; with out set it also
// appends each exchange, once its reply has been read, as one JSON line.
type recorder struct {
	base http.RoundTripper
	norm *normalizer
	log  *os.File
	mu   sync.Mutex
	out  *os.File
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodPost {
		return notModelRequest(req), nil
	}
	r.mu.Lock()
	fmt.Fprintln(r.log, "sent")
	r.mu.Unlock()
	var request *node
	if r.out != nil {
		body, err := readBody(req)
		if err != nil {
			return nil, err
		}
		request = normalizedRequest(r.norm, body)
	}
	resp, err := r.base.RoundTrip(req)
	if err != nil {
		if r.out != nil {
			r.write(Exchange{Request: request, TransportError: r.norm.text(err.Error())})
		}
		return nil, err
	}
	status, ct, retryAfter := resp.StatusCode, resp.Header.Get("Content-Type"), resp.Header.Get("Retry-After")
	resp.Body = &teeBody{rc: resp.Body, done: func(data []byte, readErr error) {
		r.logCost(costOf(data))
		if r.out != nil {
			rr := recordResponse(status, ct, data, readErr, r.norm)
			rr.RetryAfter = retryAfter
			r.write(Exchange{Request: request, Response: rr})
		}
	}}
	return resp, nil
}

func (r *recorder) logCost(cost float64) {
	if cost > 0 {
		r.mu.Lock()
		fmt.Fprintf(r.log, "cost %g\n", cost)
		r.mu.Unlock()
	}
}

// costOf is the price a reply reports (OpenRouter's usage.cost, in US
// dollars), 0 when it reports none.
func costOf(body []byte) float64 {
	if !bytes.Contains(body, []byte(`"cost"`)) {
		return 0
	}
	var total float64
	for _, line := range bytes.Split(body, []byte("\n")) {
		data, ok := bytes.CutPrefix(line, []byte("data:"))
		if !ok {
			if !bytes.HasPrefix(bytes.TrimSpace(line), []byte("{")) {
				continue
			}
			data = line // a JSON reply
		}
		if !bytes.Contains(data, []byte(`"cost"`)) {
			continue
		}
		t, err := parseTree(bytes.TrimSpace(data))
		if err != nil {
			continue
		}
		if c := t.get("usage").get("cost"); c != nil && c.kind == '0' {
			if v, err := strconv.ParseFloat(c.text, 64); err == nil && v > 0 {
				total += v
			}
		}
	}
	return total
}

func (r *recorder) write(e Exchange) {
	line, err := json.Marshal(e)
	if err != nil {
		return // only invalid UTF-8 could fail; the replay then reports the missing exchange
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	_, _ = r.out.Write(append(line, '\n'))
}

// teeBody keeps what the client reads and reports it once: at the end of
// the body, at a read error, or when the client closes it early (it has
// what it needed, such as a stream's [DONE]).
type teeBody struct {
	rc   io.ReadCloser
	buf  bytes.Buffer
	once sync.Once
	done func(data []byte, readErr error)
}

func (t *teeBody) Read(p []byte) (int, error) {
	n, err := t.rc.Read(p)
	t.buf.Write(p[:n])
	switch {
	case err == io.EOF:
		t.finish(nil)
	case err != nil:
		t.finish(err)
	}
	return n, err
}

func (t *teeBody) Close() error {
	t.finish(nil)
	return t.rc.Close()
}

func (t *teeBody) finish(err error) {
	t.once.Do(func() { t.done(t.buf.Bytes(), err) })
}

// replayer answers each request with the next recorded reply after
// checking that the request is the recorded one. At the first difference
// it stops answering: every request from then on gets an HTTP 400, and the
// difference is reported once to the log.
type replayer struct {
	rec        *Recording
	norm       *normalizer
	root, home string

	mu       sync.Mutex
	next     int
	diverged bool
	log      *os.File
}

// errReplayStopped is the body of a refused request.
const errReplayStopped = `{"error":{"message":"eval replay: the request differs from the recording","code":400}}`

func (r *replayer) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodPost {
		return notModelRequest(req), nil
	}
	body, err := readBody(req)
	if err != nil {
		return nil, err
	}
	got := normalizedRequest(r.norm, body)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.diverged {
		return refused(req), nil
	}
	i := r.next
	r.next++
	if i >= len(r.rec.Exchanges) {
		return r.diverge(req, fmt.Sprintf("request %d was not recorded: the recording ends after %d requests", i+1, len(r.rec.Exchanges))), nil
	}
	ex := r.rec.Exchanges[i]
	if d, ok := firstDifference(ex.Request, got, "", messageLabel); ok {
		return r.diverge(req, fmt.Sprintf("request %d differs from the recording at %s: %s", i+1, d.path, d.detail)), nil
	}
	fmt.Fprintln(r.log, "sent")
	if ex.Response == nil {
		return nil, errors.New(restore(ex.TransportError, r.root, r.home, false))
	}
	data, err := ex.Response.body(r.root, r.home)
	if err != nil {
		return nil, fmt.Errorf("eval replay: recorded reply %d: %w", i+1, err)
	}
	if c := costOf(data); c > 0 {
		fmt.Fprintf(r.log, "cost %g\n", c)
	}
	var end error
	if ex.Response.Error != "" {
		end = errors.New(ex.Response.Error)
	}
	h := http.Header{}
	if ex.Response.ContentType != "" {
		h.Set("Content-Type", ex.Response.ContentType)
	}
	if ex.Response.RetryAfter != "" {
		h.Set("Retry-After", ex.Response.RetryAfter)
	}
	return &http.Response{
		Status: strconv.Itoa(ex.Response.Status) + " " + http.StatusText(ex.Response.Status), StatusCode: ex.Response.Status,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: h, Body: &replayBody{ctx: req.Context(), r: bytes.NewReader(data), end: end},
		ContentLength: -1, Request: req,
	}, nil
}

func (r *replayer) diverge(req *http.Request, msg string) *http.Response {
	r.diverged = true
	fmt.Fprintf(r.log, "diverged: %s\n", strings.ReplaceAll(msg, "\n", " "))
	return refused(req)
}

// notModelRequest answers what is not a model request (a GET of the
// endpoint's model list, asked for the context window) with 404 in every
// eval mode: its answer could differ between a recording and its replay,
// and so would compaction. The window comes from flags or the default.
func notModelRequest(req *http.Request) *http.Response {
	return &http.Response{
		Status: "404 Not Found", StatusCode: http.StatusNotFound, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{"Content-Type": {"text/plain"}}, Body: io.NopCloser(strings.NewReader("not served during an eval")),
		ContentLength: 25, Request: req,
	}
}

func refused(req *http.Request) *http.Response {
	return &http.Response{
		Status: "400 Bad Request", StatusCode: http.StatusBadRequest, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:        http.Header{"Content-Type": {"application/json"}},
		Body:          io.NopCloser(strings.NewReader(errReplayStopped)),
		ContentLength: int64(len(errReplayStopped)), Request: req,
	}
}

// replayBody serves recorded bytes, then the recorded end of the stream.
type replayBody struct {
	ctx context.Context
	r   *bytes.Reader
	end error
}

func (b *replayBody) Read(p []byte) (int, error) {
	if err := b.ctx.Err(); err != nil {
		return 0, err
	}
	n, err := b.r.Read(p)
	if err == io.EOF && b.end != nil {
		return n, b.end
	}
	return n, err
}

func (b *replayBody) Close() error { return nil }

// messageLabel names a message of a request in a difference: its role and,
// for a tool result, the call it answers.
func messageLabel(path string, n *node) string {
	if path != "messages" {
		return ""
	}
	role := n.get("role").str()
	if id := n.get("tool_call_id").str(); id != "" {
		return role + " " + id
	}
	return role
}
