package hooks_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/tiny-agent/tiny-go/internal/providertest"
	"github.com/tiny-agent/tiny-go/internal/testenv"
)

// The side-by-side runs: Claude Code itself (npm's @anthropic-ai/claude-code,
// pinned by testdata/claudecode/package-lock.json; .ci/run installs it) and
// the real tiny-go binary run the same prompt against the same scripted
// model, with the same hooks in .claude/settings.json. Every hook records
// its stdin, environment and the transcript it was pointed at; the tests
// compare the two records field by field.

const ccInstall = "npm ci --prefix internal/hooks/testdata/claudecode"

// claudeCode is the path of Claude Code's native binary.
func claudeCode(t testing.TB) string {
	t.Helper()
	base, _ := filepath.Abs(filepath.Join("testdata", "claudecode", "node_modules", "@anthropic-ai"))
	for _, p := range []string{
		filepath.Join(base, "claude-code-"+runtime.GOOS+"-"+map[string]string{"amd64": "x64"}[runtime.GOARCH], "claude"),
		filepath.Join(base, "claude-code", "bin", "claude.exe"),
	} {
		if st, err := os.Stat(p); err == nil && st.Mode()&0o111 != 0 && st.Size() > 1<<20 {
			return p
		}
	}
	t.Skip("Claude Code is not installed; run: " + ccInstall)
	return ""
}

// hookScript records each hook's input and environment under
// $CLAUDE_PROJECT_DIR/.rec, copies the transcript it names, and answers
// as the guard, context and Stop hooks of a real project would.
const hookScript = `#!/bin/sh
d="$CLAUDE_PROJECT_DIR/.rec"; mkdir -p "$d"
n="$d/$(date +%s%N)-$1"
in=$(cat)
printf '%s' "$in" > "$n.json"
env > "$n.env"
tp=$(printf '%s' "$in" | sed -n 's/.*"transcript_path":"\([^"]*\)".*/\1/p')
if [ -f "$tp" ]; then cp "$tp" "$n.transcript"; fi
case "$1" in
PreToolUse)
  case "$in" in
  *BLOCKME*) echo "blocked by the guard" >&2; exit 2;;
  *DENYME*) echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"denied by the guard"}}';;
  *REWRITEME*) echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","updatedInput":{"command":"echo rewritten"}}}';;
  *STOPME*) echo '{"continue":false,"stopReason":"stopped by the guard"}';;
  esac;;
PostToolUse)
  case "$in" in
  *CTXME*) echo '{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"post context from the hook"}}';;
  *FEEDME*) echo '{"decision":"block","reason":"post feedback from the hook"}';;
  esac;;
UserPromptSubmit) echo '{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"prompt context from the hook"}}';;
SessionStart) echo 'start context from the hook';;
Stop)
  case "$in" in
  *'"stop_hook_active":false'*) echo '{"decision":"block","reason":"keep going: say really done"}';;
  esac;;
esac
exit 0
`

// settings configures every event both support, plus matchers of each
// syntax: "*", a list, a regular expression and Claude Code 2.1's Agent.
func settings(script string) string {
	hook := func(ev string) []any {
		return []any{map[string]any{"type": "command", "command": "sh " + script + " " + ev}}
	}
	entry := func(matcher, ev string) map[string]any {
		return map[string]any{"matcher": matcher, "hooks": hook(ev)}
	}
	all := func(ev string) []any { return []any{map[string]any{"hooks": hook(ev)}} }
	h := map[string]any{
		"PreToolUse": []any{entry("*", "PreToolUse"), entry("Write|Edit", "PreToolUse-list"),
			entry("Rea.*", "PreToolUse-regex"), entry("Agent", "PreToolUse-agent")},
		"PostToolUse":        []any{entry("", "PostToolUse")},
		"PostToolUseFailure": all("PostToolUseFailure"),
		"UserPromptSubmit":   all("UserPromptSubmit"),
		"Stop":               all("Stop"),
		"SubagentStop":       all("SubagentStop"),
		"SessionStart":       all("SessionStart"),
		"SessionEnd":         all("SessionEnd"),
		"Notification":       all("Notification"),
		"PreCompact":         all("PreCompact"),
		"PostCompact":        all("PostCompact"),
	}
	b, _ := json.MarshalIndent(map[string]any{"hooks": h}, "", "  ")
	return string(b)
}

// hookRec is one hook run.
type hookRec struct {
	Event      string // the script's argument (an event, or event-matcher)
	Raw        []byte
	In         map[string]any
	Env        map[string]string
	Transcript []byte // nil when transcript_path named no file
}

// sideRun is one agent's run of the scenario.
type sideRun struct {
	Agent        string // "claude" or "tiny"
	Dir, Home    string
	Hooks        []hookRec
	Requests     []providertest.Request
	Stdout       string
	Stderr       string
	Code         int
	CompactCode  int
	CompactError string
}

// of returns the records of one script argument, in order.
func (r *sideRun) of(event string) []hookRec {
	var out []hookRec
	for _, h := range r.Hooks {
		if h.Event == event {
			out = append(out, h)
		}
	}
	return out
}

// runSide runs the scenario through one agent: a prompt (-p) that makes
// the scripted model call every tool, two more prompts, then /compact.
func runSide(t *testing.T, agent string) *sideRun {
	t.Helper()
	srv := providertest.New(t)
	srv.Respond(respond)
	r := &sideRun{Agent: agent, Dir: testenv.WorkDir(t), Home: t.TempDir()}
	script := filepath.Join(r.Home, "hook.sh")
	mustWrite(t, script, hookScript)
	mustWrite(t, filepath.Join(r.Dir, ".claude", "settings.json"), settings(script))
	run := func(args ...string) (int, string, string) {
		cmd := sideCommand(t, agent, srv, r, args...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		code := 0
		if err != nil {
			code = -1
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			}
		}
		return code, stdout.String(), stderr.String()
	}
	r.Code, r.Stdout, r.Stderr = run("-p", scenarioPrompt(r.Dir), "--dangerously-skip-permissions")
	// Two more prompts, so that tiny-go's compaction, which keeps at
	// least the last six messages and cuts at a prompt (the shared
	// runtime spec), has something to summarize, as Claude Code's has.
	for _, p := range []string{"One more thing.", "And another."} {
		if code, _, stderr := run("-c", "-p", p, "--dangerously-skip-permissions"); code != 0 {
			t.Errorf("%s -c -p %q: exit %d: %s", agent, p, code, stderr)
		}
	}
	var cerr string
	r.CompactCode, _, cerr = run("-c", "-p", "/compact keep it short", "--dangerously-skip-permissions")
	r.CompactError = cerr
	r.Requests = srv.Requests()
	r.Hooks = readRecords(t, filepath.Join(r.Dir, ".rec"))
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("%s: exit %d, stdout %q\nstderr:\n%s\ncompact: exit %d %s", agent, r.Code, r.Stdout, r.Stderr, r.CompactCode, cerr)
		}
	})
	return r
}

// sideCommand is the command line of one agent, with an environment of
// its own: a fresh HOME, no telemetry, the scripted model.
func sideCommand(t *testing.T, agent string, srv *providertest.Server, r *sideRun, args ...string) *exec.Cmd {
	bin := claudeCode
	if agent != "claude" {
		bin = tinyGo
	}
	exe := bin(t) // built before the clock starts
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	t.Cleanup(cancel)
	env := []string{"HOME=" + r.Home, "PATH=" + os.Getenv("PATH"), "LANG=C.UTF-8",
		"ANTHROPIC_API_KEY=sk-ant-side-by-side", "TMPDIR=" + os.TempDir()}
	var cmd *exec.Cmd
	if agent == "claude" {
		cmd = exec.CommandContext(ctx, exe, append(args, "--model", "claude-sonnet-4-5")...)
		env = append(env, "ANTHROPIC_BASE_URL="+strings.TrimSuffix(srv.URL(), "/v1"),
			"IS_SANDBOX=1", "DISABLE_TELEMETRY=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
			"DISABLE_AUTOUPDATER=1", "DISABLE_ERROR_REPORTING=1")
	} else {
		cmd = exec.CommandContext(ctx, exe, args...)
		env = append(env, "TINY_PROVIDER=anthropic", "TINY_MODEL=claude-sonnet-4-5",
			"TINY_ENDPOINT="+srv.URL(), "OTEL_SDK_DISABLED=true")
	}
	cmd.Dir, cmd.Env = r.Dir, env
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

func readRecords(t *testing.T, dir string) []hookRec {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	sort.Strings(files)
	var out []hookRec
	for _, f := range files {
		base := strings.TrimSuffix(f, ".json")
		raw, _ := os.ReadFile(f)
		rec := hookRec{Event: filepath.Base(base)[strings.IndexByte(filepath.Base(base), '-')+1:], Raw: raw, Env: map[string]string{}}
		if err := json.Unmarshal(raw, &rec.In); err != nil {
			t.Errorf("hook %s got stdin that is not JSON: %q", rec.Event, raw)
		}
		env, _ := os.ReadFile(base + ".env")
		for _, line := range strings.Split(string(env), "\n") {
			if k, v, ok := strings.Cut(line, "="); ok {
				rec.Env[k] = v
			}
		}
		if b, err := os.ReadFile(base + ".transcript"); err == nil {
			rec.Transcript = b
		}
		out = append(out, rec)
	}
	return out
}

func mustWrite(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o755); err != nil {
		t.Fatal(err)
	}
}
