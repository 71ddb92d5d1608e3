package agent

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/tiny-agent/tiny-go/internal/provider"
	"github.com/tiny-agent/tiny-go/internal/session"
	"github.com/tiny-agent/tiny-go/internal/session/sessiontest"
	"github.com/tiny-agent/tiny-go/internal/store"
	"github.com/tiny-agent/tiny-go/internal/tools"
)

// The step benchmarks measure what one more model step costs the agent on
// a session that already holds 10, 100 or 1,000 model steps. The issue's
// target is a loop overhead under 1 ms per step at 1,000 steps that does
// not grow with history; sending the whole active context is inherently
// proportional to its size, so that part is measured on its own:
//
//   - BenchmarkStep: the whole step against a loopback server with a
//     prebuilt reply (stepAttempt commit, request build and encode, HTTP,
//     SSE parse, settle commit).
//   - BenchmarkStepInProcess: the same step with an in-process provider
//     that returns the settled reply at once: the agent's own overhead
//     (planning, commits, state snapshots, settle) without encoding or
//     HTTP.
//   - BenchmarkStream: one provider request of the same active context
//     (encode, send, parse the reply); history=0 is the empty context, the
//     round-trip floor of client plus server.
//   - BenchmarkRequest: building the provider request from the state.

var historySteps = []int{10, 100, 1000}

// stepsPerRun is how many model steps a history run has; all but the last
// call tools.
const stepsPerRun = 5

// buildHistory returns a valid session file of steps model steps, ending
// with an open run whose last assistant entry's tool calls are all
// answered, so the planner's next action is a new model step. Tool outputs
// are 200-2,000 bytes of Go source (quotes, tabs and newlines to escape).
func buildHistory(tb testing.TB, steps int) []byte {
	tb.Helper()
	src, err := os.ReadFile("step.go")
	if err != nil {
		tb.Fatal(err)
	}
	corpus := strings.ToValidUTF8(string(src), "")
	rng := rand.New(rand.NewPCG(uint64(steps), 42))
	output := func() string {
		n := 200 + rng.IntN(1801)
		at := rng.IntN(len(corpus) - n)
		return strings.ToValidUTF8(corpus[at:at+n], "")
	}
	b := sessiontest.NewBuilder()
	for done := 0; done < steps; {
		op := b.Prompt(fmt.Sprintf("Fix the failing test number %d in internal/session and run the tests again.", done))
		for s := 1; s <= stepsPerRun && done < steps; s++ {
			done++
			step, att := b.Attempt(op, session.StepAssistant, "")
			usage := sessiontest.Usage(op, att, "", session.Usage{Input: int64(1000 * done), Output: 80})
			if s == stepsPerRun && done < steps {
				reply := sessiontest.Reply(step, att, session.StopReasonStop, "The tests pass now; the fix was a missing length check in the decoder.")
				reply.ID = b.ID()
				b.Commit(reply, usage, sessiontest.Finished(op, session.OperationRun, session.OutcomeCompleted, session.CompletionNormal, reply.ID, nil))
				continue
			}
			calls := make([]session.ToolCall, 1+rng.IntN(2))
			for i := range calls {
				if rng.IntN(2) == 0 {
					calls[i] = sessiontest.Call(fmt.Sprintf("call_%d_%d", done, i), "read", fmt.Sprintf(`{"path":"internal/session/file%d.go"}`, rng.IntN(50)))
				} else {
					calls[i] = sessiontest.Call(fmt.Sprintf("call_%d_%d", done, i), "bash", `{"command":"go test ./internal/session/ 2>&1 | tail -40"}`)
				}
			}
			b.Commit(sessiontest.Reply(step, att, session.StopReasonToolUse, "Let me look at that.", calls...), usage)
			assistant := b.Boundary()
			for i, c := range calls {
				started, result := b.StartTool(op, step, assistant, i, c, "never", "builtin:"+c.Function.Name+":v1")
				b.Commit(sessiontest.ToolResult(step, started, result, c, session.ResultSuccess, output()))
			}
		}
	}
	return b.Bytes()
}

// cannedSSE is the prebuilt streamed reply of the benchmark server: a short
// final answer with usage.
const cannedSSE = `data: {"id":"gen-1","object":"chat.completion.chunk","created":1,"model":"test/model","choices":[{"index":0,"delta":{"role":"assistant","content":"The tests pass now."},"finish_reason":null}]}

data: {"id":"gen-1","object":"chat.completion.chunk","created":1,"model":"test/model","choices":[{"index":0,"delta":{"content":" Nothing else to do."},"finish_reason":"stop"}]}

data: {"id":"gen-1","object":"chat.completion.chunk","created":1,"model":"test/model","choices":[],"usage":{"prompt_tokens":1200,"completion_tokens":9,"total_tokens":1209}}

data: [DONE]

`

// cannedServer is a loopback server that discards the request body and
// writes cannedSSE at once, so its own cost is minimal. lastBody is the
// size of the last request body.
type cannedServer struct {
	*httptest.Server
	lastBody atomic.Int64
}

func newCannedServer(tb testing.TB) *cannedServer {
	s := &cannedServer{}
	reply := []byte(cannedSSE)
	var mu sync.Mutex
	buf := make([]byte, 1<<20) // few large reads of the body
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		var n int64
		for {
			k, err := r.Body.Read(buf)
			n += int64(k)
			if err != nil {
				break
			}
		}
		mu.Unlock()
		s.lastBody.Store(n)
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(reply)
	}))
	tb.Cleanup(s.Close)
	return s
}

// instantProvider settles every request at once without encoding it.
type instantProvider struct{}

func (instantProvider) Stream(ctx context.Context, req provider.Request, onDelta func(provider.Delta)) (provider.Response, error) {
	text := "The tests pass now. Nothing else to do."
	return provider.Response{Content: &text, FinishReason: provider.FinishStop, Usage: provider.Usage{Input: 1200, Output: 9, PromptTokens: 1200}}, nil
}

// benchConfig is the agent configuration of the benchmarks: the real
// built-in tools (their schemas are part of every request) and p.
func benchConfig(tb testing.TB, dir string, p provider.Provider) Config {
	tb.Helper()
	bg, err := tools.NewManager(dir)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { bg.StopAll(context.Background()) })
	ts, err := tools.Builtins(tools.Config{WorkDir: dir, Background: bg})
	if err != nil {
		tb.Fatal(err)
	}
	return Config{
		Provider: p, Tools: ts, Model: "test/model", SystemPrompt: "You are a coding agent.",
		EnvironmentIdentity: "fixture",
		NewID:               func() string { return uuid.Must(uuid.NewV7()).String() },
	}
}

func newClient(tb testing.TB, url string) *provider.Client {
	tb.Helper()
	c, err := provider.New(provider.Config{Endpoint: url, APIKey: "bench-key", IdleTimeout: 10 * time.Second})
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// stepsPerOpen is how many steps are measured on one opened copy of a
// history before it is opened afresh.
const stepsPerOpen = 10

// benchSteps measures one model step per iteration on a history of n
// steps, in the steady state of a long session: the same agent and store
// from step to step. Every stepsPerOpen iterations, with the timer
// stopped, a fresh copy of the history is opened and one warm-up step is
// run (the first step after opening compares the whole context by value).
// Each measured iteration commits a prompt (untimed) and drives the run:
// stepAttempt, request, reply, settle. An open grows the history by at
// most stepsPerOpen short prompts and answers (about 2 KB).
func benchSteps(b *testing.B, n int, newProvider func(*testing.B) provider.Provider) {
	dir := b.TempDir()
	history := buildHistory(b, n)
	path := filepath.Join(dir, "history.jsonl")
	cfg := benchConfig(b, dir, newProvider(b))
	ctx := context.Background()
	var (
		st *store.Store
		a  *Agent
	)
	step := func() {
		res, err := a.drive(ctx, false)
		if err != nil {
			b.Fatal(err)
		}
		if res.Outcome != session.OutcomeCompleted || res.Answer == "" {
			b.Fatalf("result %+v", res)
		}
	}
	reopen := func() {
		if st != nil {
			if err := st.Close(); err != nil {
				b.Fatal(err)
			}
		}
		if err := os.WriteFile(path, history, 0o600); err != nil {
			b.Fatal(err)
		}
		s, err := store.OpenFile(path, store.Options{})
		if err != nil {
			b.Fatal(err)
		}
		st = s
		cfg.Log = st
		if a, err = New(cfg); err != nil {
			b.Fatal(err)
		}
		step()
		runtime.GC() // the reopen's garbage is not the steps'
	}
	b.Cleanup(func() { st.Close() })
	b.ReportAllocs()
	var cpu time.Duration
	i := 0
	for b.Loop() {
		b.StopTimer()
		if i%stepsPerOpen == 0 {
			reopen()
		}
		i++
		user := cfg.NewID()
		prompt := []session.Fact{
			{ID: user, Entry: &session.UserEntry{Content: "And the next test?"}},
			{Record: &session.RunStarted{OperationID: cfg.NewID(), InputEntryID: user}},
		}
		if _, err := st.Commit(ctx, prompt); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		cpu0 := processCPU(b)
		step()
		cpu += processCPU(b) - cpu0
	}
	b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
}

// processCPU is the user+system CPU time of this process so far (server
// goroutines and GC included). The machine is shared, so wall time also
// measures the neighbours; CPU time much less so.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkStep is one whole model step against a loopback server with a
// prebuilt reply. req-KB is the size of the request body.
func BenchmarkStep(b *testing.B) {
	for _, n := range historySteps {
		b.Run(fmt.Sprintf("history=%d", n), func(b *testing.B) {
			var srv *cannedServer
			benchSteps(b, n, func(b *testing.B) provider.Provider {
				srv = newCannedServer(b)
				return newClient(b, srv.URL)
			})
			b.ReportMetric(float64(srv.lastBody.Load())/1024, "req-KB") // of the last step
		})
	}
}

// BenchmarkStepInProcess is one model step whose provider settles at once
// without encoding: the agent's own overhead per step.
func BenchmarkStepInProcess(b *testing.B) {
	for _, n := range historySteps {
		b.Run(fmt.Sprintf("history=%d", n), func(b *testing.B) {
			benchSteps(b, n, func(*testing.B) provider.Provider { return instantProvider{} })
		})
	}
}

// openHistory opens a history of n steps (n == 0: an empty session with
// one prompt) and returns its state and an agent over it.
func openHistory(b *testing.B, n int, p provider.Provider) (*session.State, *Agent) {
	dir := b.TempDir()
	var data []byte
	if n == 0 {
		bld := sessiontest.NewBuilder()
		bld.Prompt("Fix the failing test.")
		data = bld.Bytes()
	} else {
		data = buildHistory(b, n)
	}
	path := filepath.Join(dir, "history.jsonl")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		b.Fatal(err)
	}
	st, err := store.OpenFile(path, store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	cfg := benchConfig(b, dir, p)
	cfg.Log = st
	a, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	return st.State(), a
}

// BenchmarkStream is one provider request of the active context of a
// history (request encoding, loopback transfer, reply parsing). MB/s is
// request bytes per second; history=0 is the round-trip floor.
func BenchmarkStream(b *testing.B) {
	for _, n := range append([]int{0}, historySteps...) {
		b.Run(fmt.Sprintf("history=%d", n), func(b *testing.B) {
			srv := newCannedServer(b)
			client := newClient(b, srv.URL)
			st, a := openHistory(b, n, client)
			req := a.assistantRequest(st)
			ctx := context.Background()
			if _, err := client.Stream(ctx, req, nil); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(srv.lastBody.Load())
			b.ReportMetric(float64(srv.lastBody.Load())/1024, "req-KB")
			b.ReportAllocs()
			cpu := processCPU(b)
			for b.Loop() {
				if _, err := client.Stream(ctx, req, nil); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(processCPU(b)-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}

// BenchmarkRequest builds the provider request of a step from the state.
func BenchmarkRequest(b *testing.B) {
	for _, n := range historySteps {
		b.Run(fmt.Sprintf("history=%d", n), func(b *testing.B) {
			st, a := openHistory(b, n, instantProvider{})
			b.ReportAllocs()
			for b.Loop() {
				_ = a.assistantRequest(st)
			}
		})
	}
}
