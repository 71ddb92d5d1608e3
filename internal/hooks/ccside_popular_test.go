package hooks_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/providertest"
	"github.com/tiny-agent/tiny-go/internal/testenv"
)

// TestPopularHooksSideBySide runs the eight hooks of
// ccside_popular_hooks_test.go through Claude Code and tiny-go with one
// scripted model: a run whose calls each hook acts on, a prompt with an
// API key, two more prompts and /compact. For each hook it reads what
// both agents let through, what the model received and what the hook
// wrote; the values must be the expected ones in both.

const popularPrompt = "Go through the hook steps."

// popularSecret is an API-key-shaped string the prompt guard refuses.
const popularSecret = "sk-ant-api03-abcdef0123456789"

func popularSteps(dir string) []step {
	bash := func(cmd string) step {
		in := map[string]any{"command": cmd, "description": "Run " + cmd}
		return step{cc: "Bash", tiny: "bash", ccIn: in, tinyIn: in}
	}
	file := func(cc, tiny, name string, extra map[string]any) step {
		ccIn := map[string]any{"file_path": filepath.Join(dir, name)}
		tinyIn := map[string]any{"path": filepath.Join(dir, name)}
		for k, v := range extra {
			ccIn[k], tinyIn[k] = v, v
		}
		return step{cc: cc, tiny: tiny, ccIn: ccIn, tinyIn: tinyIn}
	}
	sub := map[string]any{"description": "Sub task", "prompt": "SUBTASK: answer sub done", "subagent_type": "general-purpose", "run_in_background": false}
	return []step{
		bash("grep -r TODO ."),                    // 00: the validator suggests rg
		bash("rm -rf build"),                      // 01: the validator refuses rm -rf
		bash("echo ok"),                           // 02: runs; logged
		file("Read", "read", ".env", nil),         // 03: the secret guard denies
		file("Read", "read", ".env.example", nil), // 04: a template: allowed
		file("Write", "write", "app.py", map[string]any{"content": "x = 1   \ny = 2\t\n\n\n"}), // 05: formatted
		{cc: "Agent", tiny: "task", ccIn: sub, tinyIn: sub},                                    // 06: SubagentStop logged
		{text: "steps done"},
	}
}

func popularModel(r providertest.Request) providertest.Reply {
	var req request
	if json.Unmarshal(r.Body, &req) != nil || len(req.Messages) == 0 {
		return providertest.Reply{Text: "ok"}
	}
	first, last := text(req.Messages[0].Content), text(req.Messages[len(req.Messages)-1].Content)
	switch {
	case strings.Contains(last, "detailed summary") || len(req.Tools) == 0:
		return providertest.Reply{Text: "<summary>The hook steps ran.</summary>"}
	case strings.Contains(first, "SUBTASK"):
		return providertest.Reply{Text: "sub done"}
	}
	dir, ok := workDir(req)
	if !ok {
		return providertest.Reply{Text: "ok"}
	}
	cc, n := false, 0
	for _, t := range req.Tools {
		cc = cc || t.Name == "Bash"
	}
	for _, m := range req.Messages {
		if m.Role == "assistant" {
			n += answers(m.Content)
		}
	}
	all := popularSteps(dir)
	if n >= len(all) {
		return providertest.Reply{Text: "nothing more"}
	}
	s := all[n]
	if s.text != "" {
		return providertest.Reply{Text: s.text}
	}
	name, in := s.tiny, s.tinyIn
	if cc {
		name, in = s.cc, s.ccIn
	}
	args, _ := json.Marshal(in)
	return providertest.Reply{ToolCalls: []providertest.ToolCall{{ID: fmt.Sprintf("toolu_%02d", n), Name: name, Arguments: string(args)}}}
}

// popularRun is one agent's run of the scenario.
type popularRun struct {
	*sideRun
	secretCode           int
	secretOut, secretErr string
}

func popularSettings(home string) string {
	cmd := func(script string) []any {
		return []any{map[string]any{"type": "command", "command": "python3 " + filepath.Join(home, script)}}
	}
	on := func(matcher, script string) map[string]any {
		return map[string]any{"matcher": matcher, "hooks": cmd(script)}
	}
	h := map[string]any{
		"PreToolUse":       []any{on("Bash", "validator.py"), on("Read|Edit|Write", "secrets.py")},
		"PostToolUse":      []any{on("", "logger.py"), on("Write|Edit", "format.py")},
		"UserPromptSubmit": []any{on("", "prompt.py")},
		"SessionStart":     []any{on("", "context.py")},
		"SubagentStop":     []any{on("", "logger.py")},
		"PreCompact":       []any{on("", "backup.py")},
	}
	b, _ := json.MarshalIndent(map[string]any{"hooks": h}, "", "  ")
	return string(b)
}

func runPopular(t *testing.T, agent string) *popularRun {
	t.Helper()
	srv := providertest.New(t)
	srv.Respond(popularModel)
	r := &popularRun{sideRun: &sideRun{Agent: agent, Dir: testenv.WorkDir(t), Home: t.TempDir()}}
	for name, body := range map[string]string{"validator.py": bashValidator, "secrets.py": secretGuard,
		"logger.py": toolLogger, "format.py": formatter, "prompt.py": promptGuard,
		"context.py": sessionContext, "backup.py": compactBackup} {
		mustWrite(t, filepath.Join(r.Home, name), body)
	}
	mustWrite(t, filepath.Join(r.Dir, ".claude", "settings.json"), popularSettings(r.Home))
	mustWrite(t, filepath.Join(r.Dir, ".claude", "NOTES.md"), "tabs, not spaces")
	mustWrite(t, filepath.Join(r.Dir, ".env"), "API_TOKEN=hunter2-in-env\n")
	mustWrite(t, filepath.Join(r.Dir, ".env.example"), "API_TOKEN=put-yours-here\n")
	mustWrite(t, filepath.Join(r.Dir, "build", "keep"), "built\n")
	run := func(args ...string) (int, string, string) {
		cmd := sideCommand(t, agent, srv, r.sideRun, append(args, "--dangerously-skip-permissions")...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		code := 0
		if err := cmd.Run(); err != nil {
			code = -1
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			}
		}
		return code, stdout.String(), stderr.String()
	}
	r.Code, r.Stdout, r.Stderr = run("-p", "Work in "+r.Dir+". "+popularPrompt)
	r.secretCode, r.secretOut, r.secretErr = run("-c", "-p", "Use my key "+popularSecret+" for the deploy.")
	// Three more prompts: tiny-go compacts only before a prompt that
	// leaves the last six messages (the shared runtime spec).
	for _, p := range []string{"One more thing.", "And another.", "And a last one."} {
		if code, _, stderr := run("-c", "-p", p); code != 0 {
			t.Errorf("%s -c -p %q: exit %d: %s", agent, p, code, stderr)
		}
	}
	r.CompactCode, _, r.CompactError = run("-c", "-p", "/compact keep it short")
	r.Requests = srv.Requests()
	t.Cleanup(func() {
		if t.Failed() {
			sub, _ := os.ReadFile(filepath.Join(r.Dir, "logs", "SubagentStop.json"))
			t.Logf("%s: exit %d, stdout %q\nstderr:\n%s\nsecret prompt: exit %d, stdout %q, stderr %q\ncompact: exit %d %s\nSubagentStop log: %s",
				agent, r.Code, r.Stdout, r.Stderr, r.secretCode, r.secretOut, r.secretErr, r.CompactCode, r.CompactError, sub)
		}
	})
	return r
}

// readJSON is the JSON in a file of the working tree, nil when missing.
func (r *popularRun) readJSON(rel string) any {
	b, err := os.ReadFile(filepath.Join(r.Dir, rel))
	if err != nil {
		return nil
	}
	var v any
	if json.Unmarshal(b, &v) != nil {
		return "not JSON: " + string(b)
	}
	return v
}

// popularCheck is one behaviour of one hook: get reads it from a run.
type popularCheck struct {
	hook, behaviour string
	get             func(r *popularRun) any
	want            any
}

// resultHas reports whether the model's result of a call holds s.
func (r *popularRun) resultHas(id, s string) bool {
	got, _ := r.result(id)
	return strings.Contains(got, s)
}

func popularChecks() []popularCheck {
	return []popularCheck{
		{"bash validator", "grep is refused, the rg hint reaches the model", func(r *popularRun) any {
			return r.resultHas("toolu_00", "Use 'rg' (ripgrep) instead of 'grep'.")
		}, true},
		{"bash validator", "rm -rf is refused (the reason reaches the model, build/ stays)", func(r *popularRun) any {
			_, err := os.Stat(filepath.Join(r.Dir, "build", "keep"))
			return []bool{r.resultHas("toolu_01", "BLOCKED: rm -rf"), err == nil}
		}, []bool{true, true}},
		{"secret guard", ".env denied with its reason, never sent; .env.example read", func(r *popularRun) any {
			return []bool{r.resultHas("toolu_03", "Cannot touch .env: it holds secrets."), r.sent("hunter2-in-env"), r.resultHas("toolu_04", "put-yours-here")}
		}, []bool{true, false, true}},
		{"tool logger", "PostToolUse log: tool names, the command", func(r *popularRun) any {
			log, _ := r.readJSON("logs/PostToolUse.json").([]any)
			names, cmd := []any{}, any(nil)
			for _, e := range log {
				m, _ := e.(map[string]any)
				names = append(names, m["tool_name"])
				if m["tool_name"] == "Bash" {
					cmd = field(m, "tool_input", "command")
				}
			}
			return []any{names, cmd}
		}, []any{[]any{"Bash", "Read", "Write", "Agent"}, "echo ok"}},
		{"formatter", "the written file as formatted", func(r *popularRun) any {
			b, _ := os.ReadFile(filepath.Join(r.Dir, "app.py"))
			return string(b)
		}, "x = 1\ny = 2\n"},
		{"prompt guard", "additionalContext reaches the model", func(r *popularRun) any {
			return r.sent("Prompt context: the team prefers small diffs.")
		}, true},
		{"prompt guard", "a prompt with a key never reaches the model; the reason is shown", func(r *popularRun) any {
			return []bool{r.sent("abcdef0123456789"), strings.Contains(r.secretOut+r.secretErr, "Prompt blocked: it holds an API key.")}
		}, []bool{false, true}},
		{"session context", "the notes reach the model", func(r *popularRun) any {
			return r.sent("Session startup. Project notes: tabs, not spaces")
		}, true},
		{"subagent logger", "SubagentStop log of the model's subagents: their last messages", func(r *popularRun) any {
			// Claude Code also logs its compaction, which it runs as a
			// subagent with agent_type "" (docs/hooks.md).
			log, _ := r.readJSON("logs/SubagentStop.json").([]any)
			last := []any{}
			for _, e := range log {
				if m, _ := e.(map[string]any); m["agent_type"] != "" {
					last = append(last, m["last_assistant_message"])
				}
			}
			return last
		}, []any{"sub done"}},
		{"compact backup", "one manual backup, holding the first prompt", func(r *popularRun) any {
			files, _ := filepath.Glob(filepath.Join(r.Dir, "logs", "transcript_backups", "*_pre_compact_manual.jsonl"))
			has := false
			for _, f := range files {
				b, _ := os.ReadFile(f)
				for _, m := range transcriptLines(b) {
					has = has || m["type"] == "user" && strings.Contains(fmt.Sprint(field(m, "message", "content")), popularPrompt)
				}
			}
			return []any{len(files), has}
		}, []any{1, true}},
	}
}

func TestPopularHooksSideBySide(t *testing.T) {
	claudeCode(t)
	cc, tg := runPopular(t, "claude"), runPopular(t, "tiny")
	failed := map[string]bool{}
	for _, c := range popularChecks() {
		want, _ := json.Marshal(c.want)
		for _, r := range []*popularRun{cc, tg} {
			got, _ := json.Marshal(c.get(r))
			if string(got) != string(want) {
				failed[c.hook] = true
				t.Errorf("%s, %s: %s got %s, want %s", c.hook, c.behaviour, r.Agent, got, want)
			}
		}
	}
	hooks := map[string]bool{}
	for _, c := range popularChecks() {
		hooks[c.hook] = true
	}
	t.Logf("%d of %d hooks behave as under Claude Code", len(hooks)-len(failed), len(hooks))
}
