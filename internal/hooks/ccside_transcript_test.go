package hooks_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/providertest"
	"github.com/tiny-agent/tiny-go/internal/testenv"
)

// Hooks that read transcript_path, written in the spirit of public ones
// (the ralph-wiggum plugin's Stop hook of anthropics/claude-code, the
// chat-logging Stop and SubagentStop hooks of
// disler/claude-code-hooks-mastery), run through Claude Code and tiny-go
// against the same scripted model.

// loopHook is a ralph-style loop: while .claude/loop.state exists, a Stop
// hook reads the last assistant text from the transcript; without the
// completion promise it blocks with the prompt again, with it the loop
// ends (the state file goes, the iteration it ended at is kept).
const loopHook = `import json, sys, os
inp = json.load(sys.stdin)
state = os.path.join(os.environ["CLAUDE_PROJECT_DIR"], ".claude", "loop.state")
if not os.path.exists(state):
    sys.exit(0)
n = int(open(state).read().strip() or "0")
last = ""
for line in open(inp["transcript_path"]):
    try:
        m = json.loads(line)
    except ValueError:
        continue
    if m.get("type") != "assistant":
        continue
    content = (m.get("message") or {}).get("content") or []
    texts = [b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"]
    if texts:
        last = "\n".join(texts)
if "<promise>DONE</promise>" in last:
    os.remove(state)
    open(state + ".ended", "w").write(str(n))
    sys.exit(0)
open(state, "w").write(str(n + 1))
print(json.dumps({"decision": "block", "reason": "Loop again: finish the task and say the promise."}))
`

// chatHook copies the transcript into .rec/chat.json as a JSON list, as
// a chat logger does, and records which roles it saw.
const chatHook = `import json, sys, os
inp = json.load(sys.stdin)
rec = os.path.join(os.environ["CLAUDE_PROJECT_DIR"], ".rec")
os.makedirs(rec, exist_ok=True)
chat = []
for line in open(inp["transcript_path"]):
    line = line.strip()
    if line:
        chat.append(json.loads(line))
json.dump(chat, open(os.path.join(rec, inp["hook_event_name"] + "-chat.json"), "w"))
`

// loopModel answers "still working" once, then with the promise.
func loopModel(r providertest.Request) providertest.Reply {
	var req request
	if json.Unmarshal(r.Body, &req) != nil || len(req.Tools) == 0 {
		return providertest.Reply{Text: "ok"}
	}
	n := 0
	for _, m := range req.Messages {
		if m.Role == "assistant" {
			n += answers(m.Content)
		}
	}
	if n == 0 {
		return providertest.Reply{Text: "still working"}
	}
	return providertest.Reply{Text: "finished <promise>DONE</promise>"}
}

type loopRun struct {
	stdout, stderr string
	code           int
	ended          string // the iteration the loop ended at, "" when it did not
	chat           []map[string]any
}

func runLoop(t *testing.T, agent string) loopRun {
	t.Helper()
	srv := providertest.New(t)
	srv.Respond(loopModel)
	r := &sideRun{Agent: agent, Dir: testenv.WorkDir(t), Home: t.TempDir()}
	mustWrite(t, filepath.Join(r.Home, "loop.py"), loopHook)
	mustWrite(t, filepath.Join(r.Home, "chat.py"), chatHook)
	mustWrite(t, filepath.Join(r.Dir, ".claude", "loop.state"), "1")
	cmd := func(name string) []any {
		return []any{map[string]any{"hooks": []any{map[string]any{"type": "command", "command": "python3 " + filepath.Join(r.Home, name)}}}}
	}
	b, _ := json.Marshal(map[string]any{"hooks": map[string]any{"Stop": append(cmd("loop.py"), cmd("chat.py")...)}})
	mustWrite(t, filepath.Join(r.Dir, ".claude", "settings.json"), string(b))
	c := sideCommand(t, agent, srv, r, "-p", "Do the task.", "--dangerously-skip-permissions")
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	out := loopRun{}
	if err := c.Run(); err != nil {
		out.code = -1
		if ee, ok := err.(*exec.ExitError); ok {
			out.code = ee.ExitCode()
		}
	}
	out.stdout, out.stderr = stdout.String(), stderr.String()
	if b, err := os.ReadFile(filepath.Join(r.Dir, ".claude", "loop.state.ended")); err == nil {
		out.ended = string(b)
	}
	if b, err := os.ReadFile(filepath.Join(r.Dir, ".rec", "Stop-chat.json")); err == nil {
		_ = json.Unmarshal(b, &out.chat)
	}
	return out
}

// lastText is the last assistant text of a copied chat.
func lastText(chat []map[string]any) string {
	last := ""
	for _, m := range chat {
		if m["type"] != "assistant" {
			continue
		}
		blocks, _ := field(m, "message", "content").([]any)
		for _, b := range blocks {
			if bm, _ := b.(map[string]any); bm["type"] == "text" {
				last, _ = bm["text"].(string)
			}
		}
	}
	return last
}

// The loop hook blocks once and ends at the promise, and the chat logger
// copies a transcript whose last answer is the promise, in both.
func TestTranscriptHooksSideBySide(t *testing.T) {
	claudeCode(t)
	cc, tg := runLoop(t, "claude"), runLoop(t, "tiny")
	for _, r := range []struct {
		name string
		run  loopRun
	}{{"Claude Code", cc}, {"tiny-go", tg}} {
		if r.run.code != 0 {
			t.Errorf("%s: exit %d: %s", r.name, r.run.code, r.run.stderr)
		}
		if r.run.ended != "2" {
			t.Errorf("%s: the loop ended at iteration %q; want 2 (one block, then the promise)\nstderr: %s", r.name, r.run.ended, r.run.stderr)
		}
		if !strings.Contains(r.run.stdout, "<promise>DONE</promise>") {
			t.Errorf("%s: stdout %q", r.name, r.run.stdout)
		}
		if got := lastText(r.run.chat); !strings.Contains(got, "<promise>DONE</promise>") {
			t.Errorf("%s: the copied transcript's last answer is %q", r.name, got)
		}
	}
}
