package hooks_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/providertest"
	"github.com/tiny-agent/tiny-go/internal/testenv"
)

// The stream-json side by side of issue 44: the same print-mode run, with
// stream-json out (and in), through Claude Code and tiny-go against the
// same scripted model; each message type's fields are compared. Claude
// Code is installed here (testdata/claudecode) for the hooks' comparison.

// streamModel calls Bash once, then answers.
func streamModel(r providertest.Request) providertest.Reply {
	var req request
	if json.Unmarshal(r.Body, &req) != nil || len(req.Tools) == 0 {
		return providertest.Reply{Text: "ok"}
	}
	n := 0
	cc := false
	for _, t := range req.Tools {
		cc = cc || t.Name == "Bash"
	}
	for _, m := range req.Messages {
		if m.Role == "assistant" {
			n += answers(m.Content)
		}
	}
	if n > 0 {
		return providertest.Reply{Text: "done"}
	}
	name := "bash"
	if cc {
		name = "Bash"
	}
	return providertest.Reply{ToolCalls: []providertest.ToolCall{{ID: "toolu_s1", Name: name, Arguments: `{"command":"echo hi","description":"Say hi"}`}}}
}

// streamKinds runs one agent and returns, per message kind (type or
// type/subtype), the union of its top-level fields (and message.* for
// assistant and user messages), with the first value of apiKeySource.
func streamKinds(t *testing.T, agent string, stdin string, args ...string) (map[string]map[string]bool, []map[string]any) {
	t.Helper()
	srv := providertest.New(t)
	srv.Respond(streamModel)
	r := &sideRun{Agent: agent, Dir: testenv.WorkDir(t), Home: t.TempDir()}
	mustWrite(t, filepath.Join(r.Dir, "README"), "side by side\n")
	cmd := sideCommand(t, agent, srv, r, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		code := -1
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		t.Fatalf("%s: exit %d\nstderr: %s\nstdout: %s", agent, code, stderr.String(), stdout.String())
	}
	kinds := map[string]map[string]bool{}
	var msgs []map[string]any
	for _, line := range strings.Split(stdout.String(), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) != nil {
			continue
		}
		msgs = append(msgs, m)
		kind, _ := m["type"].(string)
		if st, ok := m["subtype"].(string); ok {
			kind += "/" + st
		}
		if kinds[kind] == nil {
			kinds[kind] = map[string]bool{}
		}
		for k := range m {
			kinds[kind][k] = true
		}
		if inner, ok := m["message"].(map[string]any); ok {
			for k := range inner {
				kinds[kind]["message."+k] = true
			}
		}
	}
	return kinds, msgs
}

// streamDiff is the table of what differs: per kind, the fields only
// one of the two sends.
func streamDiff(cc, tg map[string]map[string]bool) []string {
	all := map[string]bool{}
	for k := range cc {
		all[k] = true
	}
	for k := range tg {
		all[k] = true
	}
	var kinds []string
	for k := range all {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	var rows []string
	for _, k := range kinds {
		switch {
		case cc[k] == nil:
			rows = append(rows, fmt.Sprintf("| `%s` | not sent | sent |", k))
			continue
		case tg[k] == nil:
			rows = append(rows, fmt.Sprintf("| `%s` | sent | not sent |", k))
			continue
		}
		var onlyCC, onlyTG []string
		for f := range cc[k] {
			if !tg[k][f] {
				onlyCC = append(onlyCC, f)
			}
		}
		for f := range tg[k] {
			if !cc[k][f] {
				onlyTG = append(onlyTG, f)
			}
		}
		sort.Strings(onlyCC)
		sort.Strings(onlyTG)
		if len(onlyCC)+len(onlyTG) > 0 {
			rows = append(rows, fmt.Sprintf("| `%s` | only Claude Code: %s | only tiny-go: %s |", k, strings.Join(onlyCC, ", "), strings.Join(onlyTG, ", ")))
		}
	}
	return rows
}

// streamDifferences are the fields only one of the two sends, each with
// its reason in docs/headless.md; every message kind is sent by both.
const streamDifferences = "| `assistant` | only Claude Code: message.context_management | only tiny-go: message.id, message.role, message.stop_reason, message.stop_sequence, message.type |\n" +
	"| `result/success` | only Claude Code: api_error_status, fast_mode_disabled_reason, fast_mode_state, first_content_frame_ms, model_usage_since_last_result, queued_turn_count, result_index, safety_stops, subagent_stats, terminal_reason, time_to_request_ms, ttft_ms, ttft_stream_ms | only tiny-go:  |\n" +
	"| `system/init` | only Claude Code: additional_directories, analytics_disabled, capabilities, fast_mode_disabled_reason, fast_mode_state, memory_paths, messaging_socket_path, original_cwd, per_turn_effort_active, product_feedback_disabled, terminal_slash_commands, ultrathink_available, ultrathink_typed_raises, view_mode | only tiny-go:  |\n" +
	"| `user` | only Claude Code: tool_result_meta | only tiny-go:  |"

func apiKeySource(msgs []map[string]any) any {
	for _, m := range msgs {
		if m["type"] == "system" && m["subtype"] == "init" {
			return m["apiKeySource"]
		}
	}
	return nil
}

// TestStreamJSONSideBySide logs the difference table of docs/headless.md
// ("stream-json against Claude Code, run side by side") and holds tiny-go
// to it: a kind or field that newly differs fails.
func TestStreamJSONSideBySide(t *testing.T) {
	claudeCode(t)
	runs := []struct {
		name, stdin string
		args        []string
	}{
		{"-p --output-format stream-json --verbose", "", []string{"-p", "Say hi.", "--output-format", "stream-json", "--verbose", "--dangerously-skip-permissions"}},
		{"--input-format stream-json", `{"type":"user","message":{"role":"user","content":"Say hi."}}` + "\n",
			[]string{"-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose", "--dangerously-skip-permissions"}},
	}
	for _, run := range runs {
		cc, ccMsgs := streamKinds(t, "claude", run.stdin, run.args...)
		tg, tgMsgs := streamKinds(t, "tiny", run.stdin, run.args...)
		rows := streamDiff(cc, tg)
		t.Logf("%s: apiKeySource Claude Code %v, tiny-go %v\n| kind | Claude Code | tiny-go |\n|---|---|---|\n%s",
			run.name, apiKeySource(ccMsgs), apiKeySource(tgMsgs), strings.Join(rows, "\n"))
		if a, b := apiKeySource(ccMsgs), apiKeySource(tgMsgs); a != b {
			t.Errorf("%s: apiKeySource %v, Claude Code's %v", run.name, b, a)
		}
		if got := strings.Join(rows, "\n"); got != streamDifferences {
			t.Errorf("%s: the differences are not docs/headless.md's; now:\n%s", run.name, got)
		}
	}
}
