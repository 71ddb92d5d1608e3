package recovery

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/tiny-agent/tiny-go/internal/session"
)

// TestPlansAreLegal drives every valid golden session to its end with a
// toy executor: each action becomes the facts the real executor would
// commit (model replies are a plain "done", tools succeed), and the
// reducer must accept every one of them. So the planner never proposes a
// transaction the session format forbids, recovery terminates, and a
// finished session plans a finish that appends nothing.
func TestPlansAreLegal(t *testing.T) {
	dir := filepath.Join(conformanceDir(t), "session", "fixtures")
	var manifest struct {
		Fixtures []struct {
			Name string `json:"name"`
			File string `json:"file"`
		} `json:"fixtures"`
	}
	if err := json.Unmarshal(read(t, filepath.Join(dir, "manifest.json")), &manifest, json.RejectUnknownMembers(false)); err != nil {
		t.Fatal(err)
	}
	cur := Current{
		ConfigurationDigest: "sha256:83d5da8892d877c5f94a6ff60ea8babcd1138107dcb80ed8f747372346bb5f75",
		EnvironmentIdentity: "fixture",
		Tools:               []CurrentTool{{Name: "read", DefinitionDigest: zero, Replay: ReplaySafe, ReplayKey: "builtin:read:v1"}},
	}
	extra, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	seen := map[string]bool{}
	var files []string
	for _, fx := range manifest.Fixtures {
		files = append(files, fx.File)
		seen[fx.File] = true
	}
	for _, path := range extra {
		if name := filepath.Base(path); !seen[name] {
			files = append(files, name)
		}
	}
	driven := 0
	for _, file := range files {
		data, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			t.Fatal(err)
		}
		r, c := session.NewReducerFromFile(data)
		if c != nil {
			continue // corrupt fixtures have no plan
		}
		driven++
		t.Run(strings.TrimSuffix(file, ".jsonl"), func(t *testing.T) {
			ex := &toyExecutor{t: t, r: r}
			for step := 0; ; step++ {
				if step == 30 {
					t.Fatal("recovery did not terminate in 30 actions")
				}
				st := r.State()
				action := Plan(st, cur)
				data, _ := json.Marshal(action)
				validatePlan(t, data)
				if st.Idle() {
					if _, ok := action.(Finish); !ok {
						t.Fatalf("idle session planned %s", data)
					}
					return
				}
				facts, done := ex.facts(st, action)
				if done {
					t.Logf("stops at %s", data)
					return
				}
				if c := ex.apply(facts); c != nil {
					t.Fatalf("the reducer refuses the facts of plan %s: %v", data, c)
				}
			}
		})
	}
	if driven < 10 {
		t.Fatalf("only %d valid fixtures driven", driven)
	}
}

// toyExecutor turns actions into facts with made-up ids.
type toyExecutor struct {
	t *testing.T
	r *session.Reducer
	n int
}

func (ex *toyExecutor) id() string {
	ex.n++
	return fmt.Sprintf("018f0000-0000-7000-8000-%012x", 0xe00000+ex.n)
}

// apply commits tx to the reducer as the store would: seq and timestamp
// assigned, all or nothing.
func (ex *toyExecutor) apply(tx []session.Fact) *session.Corruption {
	next := ex.r.State().Facts + 1
	for i := range tx {
		tx[i].Seq = next + int64(i)
		tx[i].Timestamp = 1710000100000 + tx[i].Seq
	}
	return ex.r.Apply(tx)
}

// facts returns the transaction that carries out a; done means the
// executor stops here (blocked, or a compaction step it cannot fake).
func (ex *toyExecutor) facts(st *session.State, a Action) (tx []session.Fact, done bool) {
	op := st.Operation
	switch a := a.(type) {
	case Finish:
		return []session.Fact{{ID: ex.id(), Record: &session.OperationFinished{
			OperationID: op.OperationID, OperationKind: op.Kind, Outcome: a.Outcome,
			Completion: a.Completion, FinalEntryID: a.FinalEntryID, Error: a.Error,
		}}}, false
	case CloseAttempt:
		return []session.Fact{{ID: ex.id(), Record: &session.StepFailed{
			OperationID: op.OperationID, StepID: op.Step.StepID, AttemptID: op.Step.AttemptID, Error: a.Error,
		}}}, false
	case Blocked:
		if a.Reason != BlockedAttemptsExhausted {
			return nil, true
		}
		return []session.Fact{{ID: ex.id(), Record: &session.StepFailed{
			OperationID: op.OperationID, StepID: op.Step.StepID, AttemptID: op.Step.AttemptID,
			Error: session.ErrorInfo{Code: session.CodeAttemptsExhausted, Message: "provider kept failing"},
		}}}, false
	case StartStep:
		if a.StepKind == session.StepCompaction {
			return nil, true
		}
		stepID := a.StepID
		if stepID == "" {
			stepID = ex.id()
		}
		snap := fixtureSnapshot
		attempt := &session.StepAttempt{
			OperationID: op.OperationID, StepID: stepID, AttemptID: ex.id(), StepKind: a.StepKind,
			Attempt: a.Attempt, ContextThroughEntryID: a.ContextThroughEntryID,
			ConfigurationSnapshot: snap, ConfigurationDigest: session.ConfigurationDigest(snap),
		}
		if c := ex.apply([]session.Fact{{ID: ex.id(), Record: attempt}}); c != nil {
			ex.t.Fatalf("the reducer refuses the attempt of %+v: %v", a, c)
		}
		done := "done"
		return []session.Fact{{ID: ex.id(), Entry: &session.AssistantEntry{
			StepID: stepID, AttemptID: attempt.AttemptID, StopReason: session.StopReasonStop, Content: &done,
		}}}, false
	case StartTool:
		call := op.Assistant.ToolCalls[a.ToolIndex]
		startedID, resultID := a.ToolStartedID, ""
		if a.Mode == ModeStart {
			startedID, resultID = ex.id(), ex.id()
			started := &session.ToolStarted{
				OperationID: op.OperationID, StepID: op.Assistant.StepID, AssistantEntryID: a.AssistantEntryID,
				ToolIndex: a.ToolIndex, ToolCallID: call.ID, ToolName: a.ToolName, Arguments: a.Arguments,
				Replay: ReplayNever, ReplayKey: "fixture:" + a.ToolName, EnvironmentIdentity: "fixture", ResultEntryID: resultID,
			}
			if c := ex.apply([]session.Fact{{ID: startedID, Record: started}}); c != nil {
				ex.t.Fatalf("the reducer refuses toolStarted of %+v: %v", a, c)
			}
		} else {
			for _, ts := range op.ToolCalls {
				if ts.ToolStartedID == startedID {
					resultID = ts.ResultEntryID
				}
			}
		}
		return []session.Fact{{ID: resultID, Entry: &session.ToolResultEntry{
			StepID: op.Assistant.StepID, ToolCallID: call.ID, Content: "ok", ToolName: a.ToolName,
			ToolStartedID: startedID, Result: session.ResultSuccess,
		}}}, false
	case AppendSynthetic:
		for _, s := range a.Results {
			if s.Reason == ReasonInterrupted {
				tx = append(tx, session.Fact{ID: s.ResultEntryID, Entry: &session.ToolResultEntry{
					StepID: op.Assistant.StepID, ToolCallID: s.ToolCallID, Content: s.Content, ToolName: s.ToolName,
					ToolStartedID: s.ToolStartedID, Result: session.ResultInterrupted,
				}})
				continue
			}
			tx = append(tx, session.Fact{ID: ex.id(), Entry: &session.SyntheticEntry{
				StepID: op.Assistant.StepID, AssistantEntryID: s.AssistantEntryID, ToolIndex: s.ToolIndex,
				ToolCallID: s.ToolCallID, Content: s.Content, ToolName: s.ToolName, Reason: s.Reason,
			}})
		}
		return tx, false
	}
	ex.t.Fatalf("unknown action %T", a)
	return nil, true
}

// fixtureSnapshot is the configuration snapshot of the golden fixtures
// (its digest is the fixtures' configurationDigest).
var fixtureSnapshot = session.ConfigurationSnapshot{
	Model:               "test/model",
	SystemPromptDigest:  zero,
	Tools:               []session.ConfigurationTool{{Name: "read", DefinitionDigest: zero}},
	AdapterIdentity:     "openrouter:chat-completions:v1",
	RoutingIdentity:     "openrouter:test/model",
	OutputOptionsDigest: zero,
}
