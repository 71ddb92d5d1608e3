package store

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/tiny-agent/tiny-go/internal/session"
)

// testClock is a settable clock that advances 1 ms per reading, so every
// transaction gets a distinct, predictable timestamp.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func newTestClock() *testClock {
	return &testClock{now: time.Date(2026, 12, 2, 12, 51, 32, 123_000_000, time.UTC)}
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.now
	c.now = c.now.Add(time.Millisecond)
	return t
}

func testHeader() NewHeader {
	return NewHeader{Provider: "openrouter", Model: "test/model", EnvironmentIdentity: "test-env"}
}

func mustID(t testing.TB) string {
	t.Helper()
	id, err := NewID()
	if err != nil {
		t.Fatal(err)
	}
	return id
}

var testSnapshot = session.ConfigurationSnapshot{
	Model:               "test/model",
	SystemPromptDigest:  session.StringDigest("system"),
	Tools:               []session.ConfigurationTool{},
	AdapterIdentity:     "openrouter:chat-completions:v1",
	RoutingIdentity:     "openrouter:test/model",
	OutputOptionsDigest: "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a",
}

// testRun builds the transactions of one complete run: accept, attempt,
// answer. Ids that facts refer to are made up front.
type testRun struct {
	op, user, step, attempt, answer string
}

func newTestRun(t testing.TB) testRun {
	return testRun{op: mustID(t), user: mustID(t), step: mustID(t), attempt: mustID(t), answer: mustID(t)}
}

func (r testRun) accept(prompt string) []session.Fact {
	return []session.Fact{
		{ID: r.user, Entry: &session.UserEntry{Content: prompt}},
		{Record: &session.RunStarted{OperationID: r.op, InputEntryID: r.user}},
	}
}

func (r testRun) request() []session.Fact {
	return []session.Fact{{Record: &session.StepAttempt{
		OperationID:           r.op,
		StepID:                r.step,
		AttemptID:             r.attempt,
		StepKind:              session.StepAssistant,
		Attempt:               1,
		ContextThroughEntryID: r.user,
		ConfigurationSnapshot: testSnapshot,
		ConfigurationDigest:   session.ConfigurationDigest(testSnapshot),
	}}}
}

func (r testRun) reply(text string) []session.Fact {
	return []session.Fact{
		{ID: r.answer, Entry: &session.AssistantEntry{StepID: r.step, AttemptID: r.attempt, StopReason: session.StopReasonStop, Content: &text}},
		{Usage: &session.UsageFact{OperationID: r.op, AttemptID: r.attempt, Usage: session.Usage{Input: 10, Output: 2, CacheRead: 3}}},
		{Record: &session.OperationFinished{OperationID: r.op, OperationKind: session.OperationRun, Outcome: session.OutcomeCompleted, Completion: session.CompletionNormal, FinalEntryID: r.answer}},
	}
}

// transactions are the three commits of the run.
func (r testRun) transactions(prompt, answer string) [][]session.Fact {
	return [][]session.Fact{r.accept(prompt), r.request(), r.reply(answer)}
}

func commit(t testing.TB, s *Store, facts []session.Fact) []session.Fact {
	t.Helper()
	out, err := s.Commit(context.Background(), facts)
	if err != nil {
		t.Fatalf("commit: %v", err)
	}
	return out
}

// commitRun commits one whole run.
func commitRun(t testing.TB, s *Store, prompt string) testRun {
	t.Helper()
	r := newTestRun(t)
	for _, tx := range r.transactions(prompt, "answer to "+prompt) {
		commit(t, s, tx)
	}
	return r
}

func createStore(t testing.TB, cwd string, opts Options) *Store {
	t.Helper()
	s, err := Create(cwd, testHeader(), opts)
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// printed is the state as `session state` prints it.
func printed(t testing.TB, st *session.State) string {
	t.Helper()
	out, err := session.MarshalResult(st, nil)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// reduceFile reduces the file at path and fails on corruption.
func reduceFile(t testing.TB, path string) *session.State {
	t.Helper()
	st, c := session.Reduce(readFile(t, path))
	if c != nil {
		t.Fatalf("%s: %v", path, c)
	}
	return st
}
