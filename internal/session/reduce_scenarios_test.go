package session_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	s "github.com/tiny-agent/tiny-go/internal/session"
	st "github.com/tiny-agent/tiny-go/internal/session/sessiontest"
)

var update = flag.Bool("update-scenarios", false, "rewrite testdata/scenarios from the scenario builders")

const scenarioDir = "testdata/scenarios"

// scenarios are this package's own golden fixtures, built from typed
// facts. TestScenarioFiles keeps the committed files in step with these
// builders; TestScenarios (in package session) checks the files like the
// shared ones.
var scenarios = []struct {
	name  string
	build func() *st.Builder
}{
	{"repeated-compaction", func() *st.Builder {
		b := st.NewBuilder()
		r := startRunOn(b, "read the readme")
		asst := r.reply(s.StopReasonToolUse, "", call1)
		started, result := b.StartTool(r.op, r.step, asst, 0, call1, "safe", "builtin:read:v1")
		b.Commit(st.ToolResult(r.step, started, result, call1, s.ResultSuccess, "# readme"))
		step, att := b.Attempt(r.op, s.StepAssistant, "")
		b.Commit(st.Reply(step, att, s.StopReasonStop, "It is a readme."))
		r.finish()
		finishPrompt(b, "thanks", "You are welcome.")
		// Sources: user, assistant, tool, assistant, user, assistant.
		mustCompact(b, "first summary", 2)
		finishPrompt(b, "one more", "Sure.")
		// The summary is not a source: the second compaction partitions
		// the retained tail and what followed it.
		mustCompact(b, "second summary", 2)
		b.Prompt("and now?")
		return b
	}},
	{"parallel-tool-calls", func() *st.Builder {
		b := st.NewBuilder()
		r := startRunOn(b, "look around")
		read := st.Call("call_a", "read", `{"path":"go.mod"}`)
		bad := st.Call("call_b", "fly", `{}`)
		bash := st.Call("call_c", "bash", `{"command":"ls"}`)
		asst := r.reply(s.StopReasonToolUse, "Looking.", read, bad, bash)
		// Started in index order, run in parallel, answered out of order.
		b.StartTool(r.op, r.step, asst, 0, read, "safe", "builtin:read:v1")
		b.Commit(st.Synthetic(r.step, asst, 1, bad, s.ReasonUnknownTool))
		s2, r2 := b.StartTool(r.op, r.step, asst, 2, bash, "never", "builtin:bash:v1")
		b.Commit(st.ToolResult(r.step, s2, r2, bash, s.ResultError, "ls: permission denied"),
			st.Usage(r.op, "", s2, s.Usage{Input: 7}))
		return b
	}},
	{"tool-owned-usage", func() *st.Builder {
		b := st.NewBuilder()
		r := startRunOn(b, "run the tests")
		bash := st.Call("call_1", "bash", `{"command":"go test ./..."}`)
		asst := r.reply(s.StopReasonToolUse, "", bash)
		started, result := b.StartTool(r.op, r.step, asst, 0, bash, "never", "builtin:bash:v1")
		b.Commit(st.ToolResult(r.step, started, result, bash, s.ResultSuccess, "ok"),
			st.Usage(r.op, "", started, s.Usage{Input: 100, Output: 20, CacheRead: 3, CacheWrite: 4}))
		step, att := b.Attempt(r.op, s.StepAssistant, "")
		final := st.Reply(step, att, s.StopReasonStop, "All tests pass.")
		final.ID = b.ID()
		b.Commit(final, st.Usage(r.op, att, "", s.Usage{Input: 1000, Output: 50, CacheRead: 900}),
			st.Finished(r.op, s.OperationRun, s.OutcomeCompleted, s.CompletionNormal, final.ID, nil))
		return b
	}},
	{"compaction-aborting", func() *st.Builder {
		b := compactable()
		op, _, step, att := startCompaction(b)
		b.Commit(st.Record(&s.AbortRequested{OperationID: op, OperationKind: s.OperationCompaction, Phase: s.PhaseCompact, Reason: s.AbortReasonEscape}))
		b.Commit(st.Record(&s.StepFailed{OperationID: op, StepID: step, AttemptID: att, Error: s.ErrorInfo{Code: s.CodeAborted, Message: "Operation aborted"}}))
		return b
	}},
	{"aborted-compaction", func() *st.Builder {
		b := compactable()
		op, _, step, att := startCompaction(b)
		b.Commit(st.Record(&s.AbortRequested{OperationID: op, OperationKind: s.OperationCompaction, Phase: s.PhaseCompact, Reason: s.AbortReasonEscape}))
		b.Commit(st.Record(&s.StepFailed{OperationID: op, StepID: step, AttemptID: att, Error: s.ErrorInfo{Code: s.CodeAborted, Message: "Operation aborted"}}))
		b.Commit(st.Finished(op, s.OperationCompaction, s.OutcomeAborted, "", "", nil))
		return b
	}},
	{"compaction-settled", func() *st.Builder {
		b := compactable()
		plan, _ := b.PlanCompaction(2)
		op, result := b.StartCompaction(plan)
		_, att := b.Attempt(op, s.StepCompaction, "")
		b.Commit(st.Usage(op, att, "", s.Usage{Input: 40, Output: 8}), st.CompactionEntry(op, result, "summary", plan))
		return b
	}},
	{"truncated-reply", func() *st.Builder {
		b := st.NewBuilder()
		r := startRunOn(b, "write two files")
		w1 := st.Call("call_1", "write", `{"path":"a.go","content":"package a"}`)
		w2 := st.Call("call_2", "write", `{"path":"b.go","cont`)
		asst := r.reply(s.StopReasonLength, "", w1, w2)
		b.Commit(st.Synthetic(r.step, asst, 0, w1, s.ReasonTruncated), st.Synthetic(r.step, asst, 1, w2, s.ReasonTruncated),
			st.Finished(r.op, s.OperationRun, s.OutcomeCompleted, s.CompletionTruncated, asst, nil))
		return b
	}},
}

func startRunOn(b *st.Builder, prompt string) run {
	op := b.Prompt(prompt)
	user := b.Boundary()
	step, att := b.Attempt(op, s.StepAssistant, "")
	return run{b, op, user, step, att}
}

// finishPrompt commits a whole one-step run.
func finishPrompt(b *st.Builder, prompt, answer string) {
	r := startRunOn(b, prompt)
	r.reply(s.StopReasonStop, answer)
	r.finish()
}

func mustCompact(b *st.Builder, summary string, keep int) {
	if !b.Compact(summary, keep, s.Usage{Input: 50, Output: 10}) {
		panic("nothing to compact")
	}
}

// compactable is an idle session of two finished runs.
func compactable() *st.Builder {
	b := st.NewBuilder()
	finishPrompt(b, "hello", "Hi.")
	finishPrompt(b, "bye", "Bye.")
	return b
}

func startCompaction(b *st.Builder) (op, result, step, att string) {
	plan, ok := b.PlanCompaction(2)
	if !ok {
		panic("nothing to compact")
	}
	op, result = b.StartCompaction(plan)
	step, att = b.Attempt(op, s.StepCompaction, "")
	return op, result, step, att
}

// TestScenarioFiles checks that testdata/scenarios holds exactly what the
// builders produce; -update-scenarios rewrites the files and the manifest.
func TestScenarioFiles(t *testing.T) {
	type entry struct {
		Name        string `json:"name"`
		File        string `json:"file"`
		Expected    string `json:"expected"`
		SchemaValid bool   `json:"schemaValid"`
	}
	var entries []entry
	for _, sc := range scenarios {
		data := sc.build().Bytes()
		state, c := s.Reduce(data)
		result, err := s.MarshalResult(state, c)
		if err != nil {
			t.Fatal(err)
		}
		want := jsontext.Value(result)
		if err := want.Indent(jsontext.WithIndent("    ")); err != nil {
			t.Fatal(err)
		}
		want = append(want, '\n')
		e := entry{sc.name, sc.name + ".jsonl", sc.name + ".expected.json", true}
		entries = append(entries, e)
		if *update {
			writeFile(t, e.File, data)
			writeFile(t, e.Expected, want)
			continue
		}
		if got, _ := os.ReadFile(filepath.Join(scenarioDir, e.File)); !bytes.Equal(got, data) {
			t.Errorf("%s is stale: run go test -run TestScenarioFiles -update-scenarios and review the diff", e.File)
		}
		if got, _ := os.ReadFile(filepath.Join(scenarioDir, e.Expected)); !bytes.Equal(got, want) {
			t.Errorf("%s is stale: run go test -run TestScenarioFiles -update-scenarios and review the diff", e.Expected)
		}
	}
	manifest, err := json.Marshal(struct {
		Version  int     `json:"version"`
		Fixtures []entry `json:"fixtures"`
	}{1, entries}, jsontext.WithIndent("    "))
	if err != nil {
		t.Fatal(err)
	}
	manifest = append(manifest, '\n')
	if *update {
		writeFile(t, "manifest.json", manifest)
	} else if got, _ := os.ReadFile(filepath.Join(scenarioDir, "manifest.json")); !bytes.Equal(got, manifest) {
		t.Error("manifest.json is stale: run go test -run TestScenarioFiles -update-scenarios")
	}
}

func writeFile(t *testing.T, name string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(scenarioDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(scenarioDir, name), data, 0o644); err != nil {
		t.Fatal(err)
	}
}
