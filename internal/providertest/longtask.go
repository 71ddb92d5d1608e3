package providertest

import (
	"fmt"
	"regexp"
	"strconv"
)

// LongTask answers the requests of a task of Steps tool rounds, for use
// with Server.Respond: an assistant request gets one call to the next
// step's tool, until Steps calls were made, then Answer; a summary request
// (one without tools) gets a summary that names the steps done. The step
// is read from the request itself (the call ids it carries and the summary
// of earlier compactions), so any number of compactions, retries and
// restarts of the client are answered consistently. The reported prompt
// tokens are the request body's bytes / BytesPerToken, so a client's
// context-window arithmetic sees the context grow.
type LongTask struct {
	Steps  int
	Answer string
	// Call returns the tool call of step n (1-based) without its id.
	Call func(n int) ToolCall
	// BytesPerToken defaults to 4.
	BytesPerToken int
}

var (
	longTaskCallID = regexp.MustCompile(`lt-call-(\d+)`)
	longTaskDone   = regexp.MustCompile(`steps done: (\d+)`)
)

// LongTaskCallID is the id of step n's call.
func LongTaskCallID(n int) string { return fmt.Sprintf("lt-call-%d", n) }

// StepsDone is the highest step the request shows as made.
func (l *LongTask) StepsDone(body []byte) int {
	done := 0
	for _, re := range []*regexp.Regexp{longTaskCallID, longTaskDone} {
		for _, m := range re.FindAllSubmatch(body, -1) {
			if n, err := strconv.Atoi(string(m[1])); err == nil && n > done {
				done = n
			}
		}
	}
	return done
}

// Reply is the responder (see Server.Respond).
func (l *LongTask) Reply(r Request) Reply {
	per := l.BytesPerToken
	if per <= 0 {
		per = 4
	}
	u := &Usage{PromptTokens: int64(len(r.Body) / per), CompletionTokens: 20}
	done := l.StepsDone(r.Body)
	if len(r.Chat.Tools) == 0 {
		return Reply{Text: fmt.Sprintf("Summary of the task so far: steps done: %d.", done), Usage: u, ChunkSize: 64}
	}
	if done >= l.Steps {
		return Reply{Text: l.Answer, Usage: u, ChunkSize: 64}
	}
	c := l.Call(done + 1)
	c.ID = LongTaskCallID(done + 1)
	return Reply{ToolCalls: []ToolCall{c}, Usage: u, ChunkSize: 256}
}
