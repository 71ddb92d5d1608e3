package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/reasoning"
	"github.com/tiny-agent/tiny-go/internal/session"
)

// Streamed reasoning_details fragments as Gemini 3 sends them through
// OpenRouter, and the one array a follow-up must carry back.
var (
	geminiFragments = []string{
		`{"type":"reasoning.text","text":"I will ","index":0,"format":"google-gemini-v1"}`,
		`{"type":"reasoning.text","text":"run it.","index":0}`,
		`{"type":"reasoning.encrypted","data":"c2ln\/bmF0dXJl","index":1, "format":"google-gemini-v1"}`,
	}
	geminiDetails = `[{"type":"reasoning.text","text":"I will run it.","index":0,"format":"google-gemini-v1"},{"type":"reasoning.encrypted","data":"c2ln\/bmF0dXJl","index":1, "format":"google-gemini-v1"}]`
)

// geminiServer streams reasoning, reasoning_details and a bash call, and,
// like Gemini 3, refuses (HTTP 400) a follow-up whose assistant tool call
// turn lacks the details it returned, byte for byte.
type geminiServer struct {
	*httptest.Server
	rejected, accepted atomic.Int32
}

func newGeminiServer(t *testing.T) *geminiServer {
	g := &geminiServer{}
	g.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body bytes.Buffer
		_, _ = body.ReadFrom(r.Body)
		var req struct {
			Messages []struct {
				Role      string          `json:"role"`
				ToolCalls json.RawMessage `json:"tool_calls"`
				Details   json.RawMessage `json:"reasoning_details"`
			} `json:"messages"`
		}
		if err := json.Unmarshal(body.Bytes(), &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		followUp := false
		for _, m := range req.Messages {
			if m.Role == "assistant" && len(m.ToolCalls) > 0 {
				followUp = true
				if string(m.Details) != geminiDetails {
					g.rejected.Add(1)
					w.Header().Set("Content-Type", "application/json")
					w.WriteHeader(http.StatusBadRequest)
					fmt.Fprint(w, `{"error":{"message":"Function call is missing a thought_signature in functionCall parts."}}`)
					return
				}
			}
		}
		w.Header().Set("Content-Type", "text/event-stream")
		chunk := func(delta string, finish string) {
			f := "null"
			if finish != "" {
				f = fmt.Sprintf("%q", finish)
			}
			fmt.Fprintf(w, "data: {\"id\":\"g\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":%s,\"finish_reason\":%s}]}\n\n", delta, f)
		}
		if followUp {
			g.accepted.Add(1)
			chunk(`{"role":"assistant","content":"done"}`, "")
			chunk(`{}`, "stop")
		} else {
			chunk(`{"role":"assistant","reasoning":"SECRET-THOUGHT I will run it."}`, "")
			for _, f := range geminiFragments {
				chunk(`{"reasoning_details":[`+f+`]}`, "")
			}
			chunk(`{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"bash","arguments":"{\"command\":\"echo ran >> marker\"}"}}]}`, "")
			chunk(`{}`, "tool_calls")
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(g.Close)
	return g
}

// The details stay with their assistant message across a SIGKILL during
// the tool and a resume in a new process, so the Gemini-like server takes
// the follow-up; they are beside the session file (0600), which stays a
// valid session.
func TestReasoningDetailsSurviveKillAndResume(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real processes")
	}
	g := newGeminiServer(t)
	c := newChild(t, g.URL+"/v1")
	// Commits: [user+runStarted], stepAttempt, [assistant+usage],
	// toolStarted: killed once the tool's intent is durable.
	if _, killed, err := c.run("after:4", "--fsync", "--reasoning", "high", "run it"); err != nil || !killed {
		t.Fatalf("the child was not killed: err=%v", err)
	}
	crashed, _ := os.ReadFile(c.sessionFile())
	st, corrupt := session.Reduce(crashed)
	if corrupt != nil || st.Operation == nil || len(st.Operation.ToolCalls) != 1 {
		t.Fatalf("crashed session: corrupt=%v state=%+v", corrupt, st.Operation)
	}
	out, killed, err := c.run("", "--session", st.Header.ID, "--reasoning", "high")
	if err != nil || killed {
		t.Fatalf("resume: killed=%v err=%v\n%s", killed, err, out)
	}
	if g.accepted.Load() != 1 || g.rejected.Load() != 0 {
		t.Fatalf("follow-ups accepted %d, rejected %d", g.accepted.Load(), g.rejected.Load())
	}
	final, _ := os.ReadFile(c.sessionFile())
	if st, corrupt = session.Reduce(final); corrupt != nil || !st.Idle() {
		t.Fatalf("resumed session: corrupt=%v idle=%v", corrupt, st.Idle())
	}
	if bytes.Contains(final, []byte("reasoning")) || bytes.Contains(final, []byte("SECRET-THOUGHT")) {
		t.Fatal("reasoning leaked into the session file")
	}
	sidecar := strings.TrimSuffix(c.sessionFile(), ".jsonl") + ".d"
	fi, err := os.Stat(filepath.Join(sidecar, reasoning.FileName))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("reasoning file: %v, mode %v", err, fi)
	}
	if di, err := os.Stat(sidecar); err != nil || di.Mode().Perm() != 0o700 {
		t.Fatalf("sidecar dir: %v", err)
	}
	if strings.Contains(out, "SECRET-THOUGHT") {
		t.Errorf("reasoning printed to stdout: %q", out)
	}
}

// Without a crash: one-shot stdout is the answer alone, never the
// reasoning, and the server's check passes on the first follow-up.
func TestReasoningNotOnStdout(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real processes")
	}
	g := newGeminiServer(t)
	c := newChild(t, g.URL+"/v1")
	out, killed, err := c.run("", "run it")
	if err != nil || killed {
		t.Fatalf("run: killed=%v err=%v", killed, err)
	}
	if out != "done\n" {
		t.Errorf("stdout = %q, want the answer alone", out)
	}
	if g.accepted.Load() != 1 || g.rejected.Load() != 0 {
		t.Fatalf("follow-ups accepted %d, rejected %d", g.accepted.Load(), g.rejected.Load())
	}
}
