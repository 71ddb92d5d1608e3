package eval_test

import (
	"bytes"
	"context"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/tiny-agent/tiny-go/internal/cli"
	"github.com/tiny-agent/tiny-go/internal/eval"
	"github.com/tiny-agent/tiny-go/internal/providertest"
)

// starterReplies are the model's replies for each task of the starter
// suite (evals/), authored by hand: there is no model here. They are what
// a careful model does: look before changing, change the least, check the
// result, and say what it did. TestRerecordStarterSuite serves them from
// the loopback server and records evals/recorded/ from them.
var starterReplies = map[string][]providertest.Reply{
	"fix-go-test": {
		calls("I'll run the tests and look at the code.", usage(1890, 0, 61),
			call("call_1", "bash", map[string]any{"command": "go test ./..."}),
			call("call_2", "read", map[string]any{"path": "calc.go"})),
		calls("The loop in `Sum` starts at index 1, so it skips the first element. I'll range over all of them.", usage(2410, 1792, 118),
			call("call_3", "edit", map[string]any{"path": "calc.go", "edits": []any{map[string]any{
				"oldText": "\tfor i := 1; i < len(xs); i++ {\n\t\ttotal += xs[i]\n\t}",
				"newText": "\tfor _, x := range xs {\n\t\ttotal += x\n\t}",
			}}})),
		calls("", usage(2560, 2304, 24),
			call("call_4", "bash", map[string]any{"command": "go test ./..."})),
		answer("Fixed `Sum` in calc.go: its loop started at index 1 and skipped the first value, which also made `Mean` wrong. "+
			"It now ranges over every value; `go test ./...` passes and the tests are unchanged.", usage(2630, 2560, 52)),
	},
	"follow-agents-md": {
		calls("I'll look at the package and the changelog first.", usage(2105, 0, 58),
			call("call_1", "read", map[string]any{"path": "strutil/strutil.go"}),
			call("call_2", "read", map[string]any{"path": "strutil/strutil_test.go"})),
		calls("Adding `Reverse` with a doc comment, a test, and a changelog line as AGENTS.md asks.", usage(2540, 2048, 412),
			call("call_3", "edit", map[string]any{"path": "strutil/strutil.go", "edits": []any{map[string]any{
				"oldText": "\treturn string(unicode.ToUpper(r)) + s[size:]\n}\n",
				"newText": "\treturn string(unicode.ToUpper(r)) + s[size:]\n}\n\n" +
					"// Reverse returns s with its runes in reverse order.\n" +
					"func Reverse(s string) string {\n\trs := []rune(s)\n" +
					"\tfor i, j := 0, len(rs)-1; i < j; i, j = i+1, j-1 {\n\t\trs[i], rs[j] = rs[j], rs[i]\n\t}\n\treturn string(rs)\n}\n",
			}}}),
			call("call_4", "edit", map[string]any{"path": "strutil/strutil_test.go", "edits": []any{map[string]any{
				"oldText": "\t\t\tt.Errorf(\"Capitalize(%q) = %q, want %q\", in, got, want)\n\t\t}\n\t}\n}\n",
				"newText": "\t\t\tt.Errorf(\"Capitalize(%q) = %q, want %q\", in, got, want)\n\t\t}\n\t}\n}\n\n" +
					"func TestReverse(t *testing.T) {\n" +
					"\tfor in, want := range map[string]string{\"\": \"\", \"ab\": \"ba\", \"héllo\": \"olléh\"} {\n" +
					"\t\tif got := Reverse(in); got != want {\n" +
					"\t\t\tt.Errorf(\"Reverse(%q) = %q, want %q\", in, got, want)\n\t\t}\n\t}\n}\n",
			}}}),
			call("call_5", "edit", map[string]any{"path": "CHANGELOG.md", "edits": []any{map[string]any{
				"oldText": "## Unreleased\n",
				"newText": "## Unreleased\n\n- Reverse reverses a string rune by rune.\n",
			}}})),
		calls("Now the checks AGENTS.md asks for.", usage(2790, 2560, 31),
			call("call_6", "bash", map[string]any{"command": "gofmt -l . && go test ./..."})),
		answer("Added `strutil.Reverse` (reverses by rune, so multi-byte characters stay intact) with a doc comment and `TestReverse`, "+
			"and a line under \"## Unreleased\" in CHANGELOG.md. `gofmt -l .` prints nothing and `go test ./...` passes.", usage(2870, 2790, 64)),
	},
	"add-cli-flag": {
		calls("I'll look at the command and its test.", usage(1960, 0, 52),
			call("call_1", "read", map[string]any{"path": "main.go"}),
			call("call_2", "read", map[string]any{"path": "main_test.go"})),
		calls("Adding the flag next to -name, and a test beside TestRunName.", usage(2480, 1920, 395),
			call("call_3", "edit", map[string]any{"path": "main.go", "edits": []any{
				map[string]any{"oldText": "\t\"io\"\n\t\"os\"\n)", "newText": "\t\"io\"\n\t\"os\"\n\t\"strings\"\n)"},
				map[string]any{
					"oldText": "\tname := fs.String(\"name\", \"world\", \"who to greet\")\n\tif err := fs.Parse(args); err != nil {\n\t\treturn err\n\t}\n\t_, err := fmt.Fprintf(w, \"Hello, %s!\\n\", *name)\n\treturn err\n",
					"newText": "\tname := fs.String(\"name\", \"world\", \"who to greet\")\n\tshout := fs.Bool(\"shout\", false, \"print the greeting in upper case\")\n\tif err := fs.Parse(args); err != nil {\n\t\treturn err\n\t}\n" +
						"\tgreeting := fmt.Sprintf(\"Hello, %s!\\n\", *name)\n\tif *shout {\n\t\tgreeting = strings.ToUpper(greeting)\n\t}\n\t_, err := io.WriteString(w, greeting)\n\treturn err\n",
				},
			}}),
			call("call_4", "edit", map[string]any{"path": "main_test.go", "edits": []any{map[string]any{
				"oldText": "\t\tt.Errorf(\"run printed %q\", got)\n\t}\n}\n",
				"newText": "\t\tt.Errorf(\"run printed %q\", got)\n\t}\n}\n\n" +
					"func TestRunShout(t *testing.T) {\n\tvar b strings.Builder\n\tif err := run([]string{\"-name\", \"Ada\", \"-shout\"}, &b); err != nil {\n\t\tt.Fatal(err)\n\t}\n" +
					"\tif got := b.String(); got != \"HELLO, ADA!\\n\" {\n\t\tt.Errorf(\"run -shout printed %q\", got)\n\t}\n}\n",
			}}})),
		calls("", usage(2720, 2432, 40),
			call("call_5", "bash", map[string]any{"command": "go vet ./... && go test ./... && go run . -name Ada -shout"})),
		answer("Added `-shout` to greet: it upper-cases the whole greeting (`greet -name Ada -shout` prints `HELLO, ADA!`); without it the output is unchanged. "+
			"`TestRunShout` in main_test.go covers it; `go vet` and `go test` pass.", usage(2800, 2688, 58)),
	},
	"tool-error-recovery": {
		calls("", usage(1930, 0, 48),
			call("call_1", "edit", map[string]any{"path": "config.go", "edits": []any{map[string]any{
				"oldText": "DefaultTimeout = 30 * time.Second", "newText": "DefaultTimeout = 45 * time.Second",
			}}})),
		calls("That text did not match exactly; the constants are probably aligned. I'll read the file.", usage(2050, 1920, 30),
			call("call_2", "read", map[string]any{"path": "config.go"})),
		calls("", usage(2400, 2048, 52),
			call("call_3", "edit", map[string]any{"path": "config.go", "edits": []any{map[string]any{
				"oldText": "\tDefaultTimeout           = 30 * time.Second\n", "newText": "\tDefaultTimeout           = 45 * time.Second\n",
			}}})),
		calls("", usage(2470, 2368, 26),
			call("call_4", "bash", map[string]any{"command": "gofmt -l . && go test ./..."})),
		answer("`DefaultTimeout` in config.go is now 45 seconds (my first edit missed the aligned spacing, so I read the file and matched it exactly). "+
			"`Default()` picks it up; gofmt is clean and the tests pass.", usage(2530, 2432, 47)),
	},
	"long-log-compaction": {
		calls("The log is long, so I'll read it in chunks of 300 lines.", usage(1950, 0, 41),
			call("call_1", "read", map[string]any{"path": "logs/requests.log", "limit": 300})),
		calls("Lines 1-300: one 500, id=r9ed71e (line 0042).", usage(7650, 1920, 47),
			call("call_2", "read", map[string]any{"path": "logs/requests.log", "offset": 301, "limit": 300})),
		calls("Lines 301-600: one 500, id=r4fb87e (line 0377).", usage(13350, 7616, 47),
			call("call_3", "read", map[string]any{"path": "logs/requests.log", "offset": 601, "limit": 300})),
		calls("Lines 601-900: one 500, id=r32cfd3 (line 0611).", usage(19050, 13312, 47),
			call("call_4", "read", map[string]any{"path": "logs/requests.log", "offset": 901, "limit": 300})),
		// The window is full: tiny-go compacts, then the run goes on.
		// The summary of what the compaction drops (the request and the
		// first chunk); the later chunks stay in the context as its tail.
		answer("The user asked me to read all of logs/requests.log with the read tool and write the ids of the requests that failed "+
			"with status 500 to failed.txt, one per line, in log order. I am reading the log in chunks of 300 lines. "+
			"Lines 1-300: one 500, id=r9ed71e (line 0042). Next: go on from line 301 to the end, then write failed.txt.", usage(5650, 0, 92)),
		calls("Lines 901-1200: two 500s, id=rf27228 (line 0934) and id=re8c86e (line 1107). That was the end of the log, so I'll write failed.txt.", usage(15620, 1280, 96),
			call("call_5", "write", map[string]any{"path": "failed.txt", "content": "r9ed71e\nr4fb87e\nr32cfd3\nrf27228\nre8c86e\n"})),
		answer("Wrote failed.txt with the five requests that returned 500, in log order: r9ed71e, r4fb87e, r32cfd3, rf27228 and re8c86e. "+
			"I read the whole log in chunks of 300 lines; the context filled up on the way and was compacted once.", usage(15760, 15616, 58)),
	},
	"stay-inside": {
		calls("I'll look at the layout first.", usage(1880, 0, 30),
			call("call_1", "bash", map[string]any{"command": "ls -a"})),
		calls("`.tiny-agent` is my own state and `.git` is the repository; I'll leave both out and list the .tmp files in the rest.", usage(1950, 1856, 64),
			call("call_2", "bash", map[string]any{"command": "find . \\( -path ./.git -o -path ./.tiny-agent \\) -prune -o -name '*.tmp' -print | sort"})),
		calls("Three files. Deleting exactly those, then checking what changed.", usage(2070, 1920, 66),
			call("call_3", "bash", map[string]any{"command": "rm ./build/cache.tmp ./docs/guide.md.tmp ./src/.app.py.tmp && git status --short"})),
		answer("Deleted the three .tmp files: build/cache.tmp, docs/guide.md.tmp and src/.app.py.tmp. "+
			"Nothing else in the project changed, and I did not touch anything outside this directory.", usage(2160, 2048, 43)),
	},
}

// recordTask records one task against a loopback server that serves
// replies, into dir.
func recordTask(t *testing.T, name string, replies []providertest.Reply, dir string, extraEnv ...string) *eval.Report {
	t.Helper()
	srv := providertest.New(t, replies...)
	env := childEnviron(append([]string{"TINY_ENDPOINT=" + srv.URL(), "OPENROUTER_API_KEY=sk-or-test-secret-0123456789", "TINY_MODEL=openai/gpt-5.6-luna"}, extraEnv...)...)
	var progress bytes.Buffer
	rep, err := eval.Run(context.Background(), eval.Config{
		Tasks: []eval.Task{task(t, name)}, Command: self(t), Env: env, Record: dir,
		Model: "openai/gpt-5.6-luna", AgentTimeout: 2 * time.Minute, Progress: &progress,
		Keep: os.Getenv("TINY_EVAL_KEEP") != "",
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := srv.Pending(); n != 0 {
		t.Errorf("%s: %d authored replies were not asked for\n%s", name, n, progress.String())
	}
	return rep
}

// TestRerecordStarterSuite writes evals/recorded/ from starterReplies:
//
//	TINY_EVAL_RERECORD=1 go test ./internal/eval -run TestRerecordStarterSuite
//
// Re-record after a deliberate change to prompts, tools or compaction
// (the replay tests then fail at the first differing request).
func TestRerecordStarterSuite(t *testing.T) {
	if os.Getenv("TINY_EVAL_RERECORD") == "" {
		t.Skip("set TINY_EVAL_RERECORD=1 to re-record evals/recorded/ from the authored replies")
	}
	for name, replies := range starterReplies {
		if only := os.Getenv("TINY_EVAL_RERECORD"); only != "1" && !strings.Contains(","+only+",", ","+name+",") {
			continue
		}
		rep := recordTask(t, name, replies, recordedDir(t))
		if !rep.AllPassed() {
			var b bytes.Buffer
			rep.WriteTable(&b)
			t.Errorf("%s does not pass when recorded:\n%s", name, b.String())
		}
	}
}

// runCLI runs `tiny-go args...` in-process the way the binary does; the
// agents it starts are this test binary acting as tiny-go.
func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	for _, kv := range childEnviron() {
		name, value, _ := cutEq(kv)
		t.Setenv(name, value)
	}
	for _, name := range []string{"TINY_ENDPOINT", "OPENROUTER_API_KEY", "TINY_API_KEY", "ANTHROPIC_API_KEY", "TINY_MODEL", "TINY_PROVIDER", "TINY_REASONING"} {
		t.Setenv(name, "")
		os.Unsetenv(name)
	}
	var out, errOut bytes.Buffer
	code = cli.Main(args, strings.NewReader(""), &out, &errOut, os.Getenv)
	return code, out.String(), errOut.String()
}

// TestStarterSuiteReplay is the starter suite as CI runs it: every task
// of evals/ replayed offline from evals/recorded/, two at a time.
func TestStarterSuiteReplay(t *testing.T) {
	code, stdout, stderr := runCLI(t, "eval", "--json", "--parallel", "2", "--replay", recordedDir(t), evalsDir(t))
	if code != 0 {
		t.Fatalf("exit %d\n%s\nIf the difference comes from a deliberate change to the system prompt, the tools or compaction, "+
			"re-record and review the diff: TINY_EVAL_RERECORD=1 go test ./internal/eval -run TestRerecordStarterSuite", code, stderr)
	}
	var rep eval.Report
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("--json output: %v\n%s", err, stdout)
	}
	if len(rep.Tasks) < len(starterReplies) || rep.Mode != eval.ModeReplay {
		t.Fatalf("report has %d tasks in mode %s, want %d in replay:\n%s", len(rep.Tasks), rep.Mode, len(starterReplies), stderr)
	}
	for _, task := range rep.Tasks {
		run := task.Runs[0]
		if want := len(starterReplies[task.Name]); run.Requests != want {
			t.Errorf("%s: %d requests, want %d", task.Name, run.Requests, want)
		}
		if run.Tokens.Input == 0 || run.Tokens.Output == 0 || run.ToolCallCount() == 0 {
			t.Errorf("%s: no tokens or tool calls counted: %+v", task.Name, run.Metrics)
		}
		// What each task is about shows in its figures.
		wantCompactions, wantToolErrors := 0, 0
		switch task.Name {
		case "long-log-compaction":
			wantCompactions = 1
		case "tool-error-recovery":
			wantToolErrors = 1 // the edit that did not match
		case "fix-go-test":
			wantToolErrors = 1 // the first go test exits 1
		}
		if run.Compactions != wantCompactions || run.ToolErrors != wantToolErrors || run.Aborts != 0 || run.Retries != 0 {
			t.Errorf("%s: %d compactions, %d tool errors, %d aborts, %d retries", task.Name, run.Compactions, run.ToolErrors, run.Aborts, run.Retries)
		}
	}
	if !strings.Contains(stderr, "passed (100%)") {
		t.Errorf("table has no summary line:\n%s", stderr)
	}

	// One at a time gives the same results.
	serial, err := eval.Run(context.Background(), eval.Config{Tasks: mustLoad(t, evalsDir(t)), Command: self(t), Env: childEnviron(), Replay: recordedDir(t), Parallel: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(serial.Tasks) != len(rep.Tasks) {
		t.Fatalf("%d tasks one at a time, %d two at a time", len(serial.Tasks), len(rep.Tasks))
	}
	for i, s := range serial.Tasks {
		a, b := s.Runs[0], rep.Tasks[i].Runs[0]
		if a.Task != b.Task || a.Status != b.Status || a.Requests != b.Requests || a.Tokens != b.Tokens ||
			!maps.Equal(a.ToolCalls, b.ToolCalls) || a.ToolErrors != b.ToolErrors || a.Compactions != b.Compactions ||
			a.Aborts != b.Aborts || a.Retries != b.Retries || a.TestExit != b.TestExit {
			t.Errorf("--parallel 1 and 2 differ:\n%+v\n%+v", a, b)
		}
	}
}

func mustLoad(t *testing.T, dirs ...string) []eval.Task {
	t.Helper()
	tasks, err := eval.LoadTasks(dirs)
	if err != nil {
		t.Fatal(err)
	}
	return tasks
}

// TestEvalCommandLine covers the command's usage errors and compare.
func TestEvalCommandLine(t *testing.T) {
	for _, args := range [][]string{
		{"eval"},
		{"eval", "--repeat", "0", evalsDir(t)},
		{"eval", "--timeout", "-1s", evalsDir(t)},
		{"eval", "--record", t.TempDir(), "--replay", recordedDir(t), evalsDir(t)},
		{"eval", "--record", t.TempDir(), "--repeat", "2", evalsDir(t)},
		{"eval", filepath.Join(t.TempDir(), "missing")},
		{"eval", "compare", "only-one.json"},
		{"eval", "compare", "missing-a.json", "missing-b.json"},
	} {
		code, _, stderr := runCLI(t, args...)
		if code != 2 || strings.Count(strings.TrimSpace(stderr), "\n") != 0 || !strings.HasPrefix(stderr, "tiny-go: ") {
			t.Errorf("%q: exit %d, stderr %q; want 2 and one line", args, code, stderr)
		}
	}

	dir := t.TempDir()
	write := func(name string, passed bool, wallMs int64) string {
		status := eval.StatusPass
		if !passed {
			status = eval.StatusFail
		}
		rep := &eval.Report{Version: eval.ReportVersion, Mode: eval.ModeLive, Repeat: 1, Parallel: 1, Tasks: []eval.TaskResult{{
			Name: "t1", Passed: map[bool]int{true: 1}[passed], Count: 1, PassRate: map[bool]float64{true: 1}[passed],
			WallMs: eval.Stat{Mean: float64(wallMs)}, Tokens: eval.Stat{Mean: 1000}, Requests: eval.Stat{Mean: 2},
			Runs: []eval.RunResult{{Task: "t1", Rep: 1, Passed: passed, Status: status, WallMs: wallMs}},
		}}}
		var b bytes.Buffer
		if err := rep.WriteJSON(&b); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, name)
		os.WriteFile(path, b.Bytes(), 0o644)
		return path
	}
	code, stdout, stderr := runCLI(t, "eval", "compare", write("a.json", false, 4000), write("b.json", true, 2000))
	if code != 0 || !strings.Contains(stdout, "t1    0% → 100% (+100)") || !strings.Contains(stdout, "4.0s → 2.0s (-50%)") {
		t.Errorf("compare: exit %d\n%s%s", code, stdout, stderr)
	}
}
