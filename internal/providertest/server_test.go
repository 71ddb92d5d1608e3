package providertest_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tiny-agent/tiny-go/internal/providertest"
)

const chatBody = `{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true,"stream_options":{"include_usage":true}}`

func post(t *testing.T, url string) (*http.Response, string, error) {
	t.Helper()
	resp, err := http.Post(url+"/chat/completions", "application/json", strings.NewReader(chatBody))
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, string(b), err
}

func TestStreamedReply(t *testing.T) {
	srv := providertest.New(t, providertest.Reply{
		Text:      "Hi there",
		ToolCalls: []providertest.ToolCall{{ID: "c1", Name: "read", Arguments: `{"path":"a"}`}},
		Usage:     &providertest.Usage{PromptTokens: 10, CompletionTokens: 2, CachedTokens: new(int64(4))},
	})
	resp, body, err := post(t, srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("Content-Type = %q", ct)
	}
	want := strings.Join([]string{
		`data: {"id":"chatcmpl-providertest","object":"chat.completion.chunk","created":0,"model":"m","choices":[{"index":0,"delta":{"content":"Hi t"},"finish_reason":null}]}`,
		`data: {"id":"chatcmpl-providertest","object":"chat.completion.chunk","created":0,"model":"m","choices":[{"index":0,"delta":{"content":"here"},"finish_reason":null}]}`,
		`data: {"id":"chatcmpl-providertest","object":"chat.completion.chunk","created":0,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","function":{"name":"read","arguments":""}}]},"finish_reason":null}]}`,
		`data: {"id":"chatcmpl-providertest","object":"chat.completion.chunk","created":0,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"pa"}}]},"finish_reason":null}]}`,
		`data: {"id":"chatcmpl-providertest","object":"chat.completion.chunk","created":0,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"th\":"}}]},"finish_reason":null}]}`,
		`data: {"id":"chatcmpl-providertest","object":"chat.completion.chunk","created":0,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"a\"}"}}]},"finish_reason":null}]}`,
		`data: {"id":"chatcmpl-providertest","object":"chat.completion.chunk","created":0,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
		`data: {"id":"chatcmpl-providertest","object":"chat.completion.chunk","created":0,"model":"m","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":2,"total_tokens":12,"prompt_tokens_details":{"cached_tokens":4}}}`,
		`data: [DONE]`,
	}, "\n\n") + "\n\n"
	if body != want {
		t.Errorf("body:\n%s\nwant:\n%s", body, want)
	}
}

func TestJSONReply(t *testing.T) {
	srv := providertest.New(t, providertest.Reply{JSON: true, ToolCalls: []providertest.ToolCall{{ID: "c1", Name: "x", Arguments: "{}"}}})
	resp, body, err := post(t, srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":"chatcmpl-providertest","object":"chat.completion","created":0,"model":"m","choices":[{"index":0,"message":{"tool_calls":[{"id":"c1","function":{"name":"x","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}`
	if resp.Header.Get("Content-Type") != "application/json" || body != want {
		t.Errorf("%s\n%s\nwant\n%s", resp.Header.Get("Content-Type"), body, want)
	}
}

func TestStatusAndExhausted(t *testing.T) {
	srv := providertest.New(t, providertest.Reply{Status: 429})
	resp, body, err := post(t, srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 429 || body != `{"error":{"message":"scripted HTTP 429","code":429}}` {
		t.Errorf("%d %s", resp.StatusCode, body)
	}
	resp, body, err = post(t, srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 500 || strings.TrimSpace(body) != "script exhausted" {
		t.Errorf("exhausted: %d %q", resp.StatusCode, body)
	}
}

func TestRecordsRequests(t *testing.T) {
	srv := providertest.New(t, providertest.Reply{Text: "a"})
	// Wrong method and path do not consume the script.
	resp, err := http.Get(srv.URL() + "/chat/completions")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET: %d", resp.StatusCode)
	}
	resp, err = http.Post(srv.URL()+"/completions", "application/json", strings.NewReader("not json"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound || srv.Pending() != 1 {
		t.Errorf("wrong path: %d, pending %d", resp.StatusCode, srv.Pending())
	}
	if _, _, err := post(t, srv.URL()); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("recorded %d requests", len(reqs))
	}
	r := reqs[2]
	if r.Method != "POST" || r.Path != "/v1/chat/completions" || string(r.Body) != chatBody || r.DecodeError != "" {
		t.Errorf("request = %+v", r)
	}
	if r.Chat.Model != "m" || len(r.Chat.Messages) != 1 || *r.Chat.Messages[0].Content != "hi" || !r.Chat.StreamOptions.IncludeUsage {
		t.Errorf("decoded = %+v", r.Chat)
	}
	if reqs[1].DecodeError == "" {
		t.Errorf("an empty object decoded without error? %+v", reqs[1])
	}
	// Requests returns copies.
	reqs[2].Body[0] = 'X'
	if srv.Requests()[2].Body[0] != '{' {
		t.Error("Requests shares its bodies")
	}
}

func TestCutAndHang(t *testing.T) {
	srv := providertest.New(t,
		providertest.Reply{Text: "abcdefgh", Cut: true, After: 1},
		providertest.Reply{Text: "abcdefgh", Hang: true, After: 1},
	)
	_, body, err := post(t, srv.URL())
	if !errors.Is(err, io.ErrUnexpectedEOF) || !strings.Contains(body, `"content":"abcd"`) || strings.Contains(body, "efgh") {
		t.Errorf("cut: %q, %v", body, err)
	}

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL()+"/chat/completions", strings.NewReader(chatBody))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil || !strings.Contains(line, "abcd") {
		t.Fatalf("first event %q, %v", line, err)
	}
	select {
	case <-srv.Disconnected(1):
		t.Fatal("disconnected before the client went away")
	case <-time.After(50 * time.Millisecond):
	}
	cancel()
	select {
	case <-srv.Disconnected(1):
	case <-time.After(5 * time.Second):
		t.Fatal("the server did not notice the client going away")
	}
	if !srv.Requests()[1].Disconnected || srv.Requests()[0].Disconnected {
		t.Errorf("Disconnected flags: %v %v", srv.Requests()[0].Disconnected, srv.Requests()[1].Disconnected)
	}
}

func TestDelay(t *testing.T) {
	srv := providertest.New(t, providertest.Reply{Text: "a", Delay: 150 * time.Millisecond})
	start := time.Now()
	if _, _, err := post(t, srv.URL()); err != nil {
		t.Fatal(err)
	}
	if elapsed := time.Since(start); elapsed < 150*time.Millisecond {
		t.Errorf("answered after %v", elapsed)
	}
}

func TestCloseEndsHangingReplies(t *testing.T) {
	srv, err := providertest.Start("127.0.0.1:0", providertest.Reply{Hang: true})
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() {
		_, _, err := post(t, srv.URL())
		errc <- err
	}()
	for len(srv.Requests()) == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	done := make(chan struct{})
	go func() { srv.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close blocked on a hanging reply")
	}
	if err := <-errc; err == nil {
		t.Error("the hanging request succeeded")
	}
	select {
	case <-srv.Disconnected(0):
		t.Error("closing the server counted as a client disconnect")
	default:
	}
}

func TestConcurrentClients(t *testing.T) {
	const n = 20
	srv := providertest.New(t)
	for i := range n {
		srv.Enqueue(providertest.Reply{Text: fmt.Sprintf("reply-%02d", i), ChunkSize: 100})
	}
	var wg sync.WaitGroup
	seen := make(chan string, n)
	for range n {
		wg.Go(func() {
			_, body, err := post(t, srv.URL())
			if err != nil {
				t.Error(err)
				return
			}
			i := strings.Index(body, "reply-")
			if i < 0 {
				t.Errorf("no reply in %q", body)
				return
			}
			seen <- body[i : i+8]
		})
	}
	wg.Wait()
	close(seen)
	distinct := make(map[string]bool)
	for s := range seen {
		distinct[s] = true
	}
	if len(distinct) != n {
		t.Errorf("%d distinct replies, want %d: each reply is used once", len(distinct), n)
	}
	if len(srv.Requests()) != n || srv.Pending() != 0 {
		t.Errorf("requests %d, pending %d", len(srv.Requests()), srv.Pending())
	}
}

func TestHandler(t *testing.T) {
	srv := providertest.New(t, providertest.Reply{Handler: func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.WriteHeader(http.StatusTeapot)
		fmt.Fprintf(w, "%d", len(b))
	}})
	resp, body, err := post(t, srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusTeapot || body != fmt.Sprint(len(chatBody)) {
		t.Errorf("%d %q", resp.StatusCode, body)
	}
}

func TestServe(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	urls := make(chan string, 1)
	errc := make(chan error, 1)
	go func() {
		errc <- providertest.Serve(ctx, "127.0.0.1:0", []providertest.Reply{{Text: "served", ChunkSize: 10}}, func(u string) { urls <- u })
	}()
	url := <-urls
	if _, body, err := post(t, url); err != nil || !strings.Contains(body, "served") {
		t.Errorf("%q %v", body, err)
	}
	cancel()
	if err := <-errc; err != nil {
		t.Errorf("Serve: %v", err)
	}
	if _, err := http.Post(url+"/chat/completions", "application/json", strings.NewReader("{}")); err == nil {
		t.Error("server still answers after Serve returned")
	}
}

// TestSubprocess runs the server from a script file in a child process,
// the way a CLI test can: the child prints its URL on stdout.
func TestSubprocess(t *testing.T) {
	if path := os.Getenv("PROVIDERTEST_SCRIPT"); path != "" {
		replies, err := providertest.LoadScript(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		go func() { io.Copy(io.Discard, os.Stdin); cancel() }() // parent closes stdin to stop us
		providertest.Serve(ctx, "127.0.0.1:0", replies, func(u string) { fmt.Println(u) })
		os.Exit(0)
	}
	script := filepath.Join(t.TempDir(), "script.json")
	if err := os.WriteFile(script, []byte(`{"replies":[{"text":"from a file","chunkSize":20,"delay":"10ms"},{"status":503}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestSubprocess$")
	cmd.Env = append(os.Environ(), "PROVIDERTEST_SCRIPT="+script)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	url, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	url = strings.TrimSpace(url)
	if _, body, err := post(t, url); err != nil || !strings.Contains(body, "from a file") {
		t.Errorf("%q %v", body, err)
	}
	if resp, _, err := post(t, url); err != nil || resp.StatusCode != 503 {
		t.Errorf("%v %v", resp, err)
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Errorf("child: %v", err)
	}
}
