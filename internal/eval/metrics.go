package eval

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/tiny-agent/tiny-go/internal/session"
)

// Tokens are summed usage facts.
type Tokens struct {
	Input      int64 `json:"input"`
	Output     int64 `json:"output"`
	CacheRead  int64 `json:"cacheRead"`
	CacheWrite int64 `json:"cacheWrite"`
}

// Total is every token counted.
func (t Tokens) Total() int64 { return t.Input + t.Output + t.CacheRead + t.CacheWrite }

// Metrics is what a run's session says about it.
type Metrics struct {
	// Requests are model requests as the agent made them (stepAttempt
	// records); Retries are requests sent again: HTTP sends beyond the
	// attempts (the provider's retries of a request that got no reply)
	// plus second attempts of a step after a crash.
	Requests    int            `json:"requests"`
	Retries     int            `json:"retries"`
	Tokens      Tokens         `json:"tokens"`
	ToolCalls   map[string]int `json:"toolCalls"`
	ToolErrors  int            `json:"toolErrors"`
	Compactions int            `json:"compactions"`
	Aborts      int            `json:"aborts"`
	// Outcome is how the last operation ended (completed, aborted,
	// failed), "open" when it did not finish, "" without any.
	Outcome string `json:"outcome,omitzero"`
	// CostUSD is what the replies said the requests cost (OpenRouter
	// reports it); 0 when no reply did.
	CostUSD float64 `json:"costUSD,omitzero"`
	// Answer is the run's last assistant text, for the report.
	Answer string `json:"-"`
}

// ToolCallCount is the number of started tools.
func (m Metrics) ToolCallCount() int {
	n := 0
	for _, c := range m.ToolCalls {
		n += c
	}
	return n
}

// sessionFile finds the one session of a task's working directory.
func sessionFile(repo string) (string, error) {
	matches, err := filepath.Glob(filepath.Join(repo, ".tiny-agent", "sessions", "*.jsonl"))
	if err != nil {
		return "", err
	}
	switch len(matches) {
	case 0:
		return "", nil
	case 1:
		return matches[0], nil
	}
	return "", fmt.Errorf("%d sessions in %s; the agent should have made one", len(matches), repo)
}

// readMetrics reduces a session file with internal/session and counts
// what it records. A corrupt session is an error: its numbers would lie.
func readMetrics(path string) (Metrics, error) {
	m := Metrics{ToolCalls: map[string]int{}}
	data, err := os.ReadFile(path)
	if err != nil {
		return m, err
	}
	st, corrupt := session.Reduce(data)
	if corrupt != nil {
		return m, fmt.Errorf("session %s is corrupt: %s at line %d", filepath.Base(path), corrupt.Code, corrupt.Line)
	}
	m.Tokens = Tokens{st.Usage.Input, st.Usage.Output, st.Usage.CacheRead, st.Usage.CacheWrite}
	sc := bufio.NewScanner(bytes.NewReader(data[:st.RepairedLength]))
	sc.Buffer(make([]byte, 0, 1<<20), len(data)+1)
	first := true
	for sc.Scan() {
		if first {
			first = false
			continue
		}
		facts, c := session.DecodeTransaction(sc.Bytes())
		if c != nil {
			return m, fmt.Errorf("session %s: %s", filepath.Base(path), c.Code)
		}
		for _, f := range facts {
			m.count(f)
		}
	}
	if st.Operation != nil {
		m.Outcome = "open"
	}
	return m, sc.Err()
}

func (m *Metrics) count(f session.Fact) {
	switch r := f.Record.(type) {
	case *session.StepAttempt:
		m.Requests++
		if r.Attempt > 1 {
			m.Retries++
		}
	case *session.ToolStarted:
		m.ToolCalls[r.ToolName]++
	case *session.AbortRequested:
		m.Aborts++
	case *session.OperationFinished:
		m.Outcome = string(r.Outcome)
	}
	switch e := f.Entry.(type) {
	case *session.ToolResultEntry:
		if e.Result != session.ResultSuccess {
			m.ToolErrors++
		}
	case *session.SyntheticEntry:
		m.ToolErrors++
	case *session.CompactionEntry:
		m.Compactions++
	case *session.AssistantEntry:
		if e.Content != nil && strings.TrimSpace(*e.Content) != "" {
			m.Answer = *e.Content
		}
	}
}
