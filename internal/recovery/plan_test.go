package recovery

import (
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tiny-agent/tiny-go/internal/session"
)

// Hand-built states for the branches of runtime.md §2 that the planner
// fixtures do not reach. Ids are short mnemonic strings: the planner never
// interprets them.
const (
	digestA = "sha256:83d5da8892d877c5f94a6ff60ea8babcd1138107dcb80ed8f747372346bb5f75"
	digestB = "sha256:ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"
	zero    = "sha256:0000000000000000000000000000000000000000000000000000000000000000"
)

func current() Current {
	return Current{
		ConfigurationDigest: digestA,
		EnvironmentIdentity: "env",
		Tools: []CurrentTool{
			{Name: "read", DefinitionDigest: zero, Replay: ReplaySafe, ReplayKey: "builtin:read:v1"},
			{Name: "bash", DefinitionDigest: zero, Replay: ReplayNever, ReplayKey: "builtin:bash:v1"},
		},
	}
}

func step(status session.StepStatus, attempt int) *session.Step {
	return &session.Step{
		OperationID:           "op",
		StepID:                "step",
		AttemptID:             "attempt",
		Attempt:               attempt,
		StepKind:              session.StepAssistant,
		Status:                status,
		ContextThroughEntryID: "user",
		ConfigurationDigest:   digestA,
	}
}

func call(id, name, args string) session.ToolCall {
	return session.ToolCall{ID: id, Type: "function", Function: session.FunctionCall{Name: name, Arguments: args}}
}

// runState is a run whose step settled with an assistant entry "asst"
// carrying calls; started and answered calls are added by the tests.
func runState(stop session.StopReason, calls ...session.ToolCall) *session.State {
	st := step(session.StepSettled, 1)
	st.SettledEntryID = "asst"
	st.StopReason = stop
	return &session.State{
		Boundary: "asst",
		Operation: &session.Operation{
			Kind:         session.OperationRun,
			OperationID:  "op",
			InputEntryID: "user",
			Step:         st,
			Assistant: &session.AssistantState{
				EntryID:    "asst",
				StepID:     "step",
				StopReason: stop,
				ToolCalls:  calls,
				Calls:      make([]session.CallState, len(calls)),
			},
		},
	}
}

// start marks call i as started with the given replay declaration.
func start(s *session.State, i int, replay, key, env string) *session.State {
	op := s.Operation
	c := op.Assistant.ToolCalls[i]
	id := "started-" + c.ID
	op.ToolCalls = append(op.ToolCalls, session.ToolState{
		ToolStarted: session.ToolStarted{
			OperationID:         "op",
			StepID:              "step",
			AssistantEntryID:    "asst",
			ToolIndex:           i,
			ToolCallID:          c.ID,
			ToolName:            c.Function.Name,
			Arguments:           jsontext.Value(c.Function.Arguments),
			Replay:              replay,
			ReplayKey:           key,
			EnvironmentIdentity: env,
			ResultEntryID:       "result-" + c.ID,
		},
		ToolStartedID: id,
		Status:        session.ToolPending,
	})
	op.Assistant.Calls[i].ToolStartedID = id
	return s
}

// answer gives call i a result entry (which becomes the boundary).
func answer(s *session.State, i int) *session.State {
	op := s.Operation
	cs := &op.Assistant.Calls[i]
	cs.Answered = true
	cs.ResultEntryID = "result-" + op.Assistant.ToolCalls[i].ID
	for j := range op.ToolCalls {
		if op.ToolCalls[j].ToolStartedID == cs.ToolStartedID && cs.ToolStartedID != "" {
			op.ToolCalls[j].Status = session.ToolCompleted
		}
	}
	s.Boundary = cs.ResultEntryID
	return s
}

func abort(s *session.State) *session.State {
	s.Operation.AbortRequested = true
	s.Operation.Abort = &session.AbortRequested{OperationID: "op", OperationKind: s.Operation.Kind, Phase: session.PhaseModel, Reason: session.AbortReasonEscape}
	return s
}

func accepted() *session.State {
	return &session.State{
		Boundary:  "user",
		Operation: &session.Operation{Kind: session.OperationRun, OperationID: "op", InputEntryID: "user"},
	}
}

func compaction(st *session.Step) *session.State {
	if st != nil {
		st.StepKind = session.StepCompaction
		st.ContextThroughEntryID = "through"
	}
	return &session.State{
		Boundary: "through",
		Operation: &session.Operation{
			Kind:                session.OperationCompaction,
			OperationID:         "op",
			InputThroughEntryID: "through",
			ResultEntryID:       "compaction-result",
			Step:                st,
		},
	}
}

func withAttempt(s *session.State, st *session.Step) *session.State {
	s.Operation.Step = st
	return s
}

func changed(c Current, f func(*Current)) Current {
	c.Tools = append([]CurrentTool(nil), c.Tools...)
	f(&c)
	return c
}

const (
	interruptedJSON = `"reason":"interrupted","content":"Operation interrupted after execution status became unknown; the tool was not replayed."`
	abortedJSON     = `"reason":"aborted","content":"Operation aborted before execution."`
	truncatedJSON   = `"reason":"truncated","content":"Error: Tool call arguments were truncated by the model token limit; the tool was not executed."`
	invalidJSON     = `"reason":"invalidArguments","content":"Error: Tool arguments were invalid; the tool was not executed."`
	unknownJSON     = `"reason":"unknownTool","content":"Error: Unknown tool; the tool was not executed."`
)

func TestPlanBranches(t *testing.T) {
	settledCompaction := step(session.StepSettled, 1)
	settledCompaction.SettledEntryID = "compaction-result"

	tests := []struct {
		name    string
		state   *session.State
		current Current
		want    string
	}{
		// 1. idle
		{"idle", &session.State{}, current(),
			`{"type":"finish","outcome":"completed","completion":"normal"}`},

		// 2. abort beats everything
		{"abort open attempt", abort(withAttempt(accepted(), step(session.StepAttempting, 1))), current(),
			`{"type":"closeAttempt","error":{"code":"aborted","message":"Operation aborted"}}`},
		{"abort beats attempts exhausted", abort(withAttempt(accepted(), step(session.StepAttempting, 2))), current(),
			`{"type":"closeAttempt","error":{"code":"aborted","message":"Operation aborted"}}`},
		{"abort beats configuration change", abort(withAttempt(accepted(), step(session.StepAttempting, 1))),
			changed(current(), func(c *Current) { c.ConfigurationDigest = digestB }),
			`{"type":"closeAttempt","error":{"code":"aborted","message":"Operation aborted"}}`},
		{"abort open compaction attempt", abort(compaction(step(session.StepAttempting, 1))), current(),
			`{"type":"closeAttempt","error":{"code":"aborted","message":"Operation aborted"}}`},
		{"abort mixed started and unstarted calls",
			abort(start(answer(start(runState(session.StopReasonToolUse,
				call("c0", "read", `{}`), call("c1", "bash", `{}`), call("c2", "read", `{}`), call("c3", "nope", `x`)),
				0, ReplaySafe, "builtin:read:v1", "env"), 0), 1, ReplayNever, "builtin:bash:v1", "env")),
			current(),
			`{"type":"appendSynthetic","results":[
				{"assistantEntryId":"asst","toolIndex":1,"toolCallId":"c1","toolName":"bash","toolStartedId":"started-c1","resultEntryId":"result-c1",` + interruptedJSON + `},
				{"assistantEntryId":"asst","toolIndex":2,"toolCallId":"c2","toolName":"read",` + abortedJSON + `},
				{"assistantEntryId":"asst","toolIndex":3,"toolCallId":"c3","toolName":"nope",` + abortedJSON + `}]}`},
		{"abort safe pending tool is interrupted not replayed",
			abort(start(runState(session.StopReasonToolUse, call("c0", "read", `{}`)), 0, ReplaySafe, "builtin:read:v1", "env")),
			current(),
			`{"type":"appendSynthetic","results":[
				{"assistantEntryId":"asst","toolIndex":0,"toolCallId":"c0","toolName":"read","toolStartedId":"started-c0","resultEntryId":"result-c0",` + interruptedJSON + `}]}`},
		{"abort length calls are aborted not truncated",
			abort(runState(session.StopReasonLength, call("c0", "read", `{"pa`))), current(),
			`{"type":"appendSynthetic","results":[{"assistantEntryId":"asst","toolIndex":0,"toolCallId":"c0","toolName":"read",` + abortedJSON + `}]}`},
		{"abort all answered", abort(answer(runState(session.StopReasonToolUse, call("c0", "nope", `{}`)), 0)), current(),
			`{"type":"finish","outcome":"aborted"}`},
		{"abort before any step", abort(accepted()), current(),
			`{"type":"finish","outcome":"aborted"}`},
		{"abort failed step", abort(withAttempt(accepted(), step(session.StepFailedS, 1))), current(),
			`{"type":"finish","outcome":"aborted"}`},
		{"abort settled compaction", abort(compaction(settledCompaction)), current(),
			`{"type":"finish","outcome":"aborted"}`},

		// 3. no step yet
		{"run without step", accepted(), current(),
			`{"type":"startStep","stepKind":"assistant","attempt":1,"contextThroughEntryId":"user"}`},
		{"compaction without step", compaction(nil), current(),
			`{"type":"startStep","stepKind":"compaction","attempt":1,"contextThroughEntryId":"through"}`},

		// 4. step failed
		{"step failed", withAttempt(accepted(), step(session.StepFailedS, 1)), current(),
			`{"type":"finish","outcome":"failed","error":{"code":"model_error","message":"provider request failed"}}`},
		{"compaction step failed", compaction(step(session.StepFailedS, 2)), current(),
			`{"type":"finish","outcome":"failed","error":{"code":"model_error","message":"provider request failed"}}`},

		// 5. attempt open
		{"attempt 2 open", withAttempt(accepted(), step(session.StepAttempting, 2)), current(),
			`{"type":"blocked","reason":"attempts_exhausted"}`},
		{"attempts exhausted before configuration change", withAttempt(accepted(), step(session.StepAttempting, 2)),
			changed(current(), func(c *Current) { c.ConfigurationDigest = digestB }),
			`{"type":"blocked","reason":"attempts_exhausted"}`},
		{"attempt 1 open, configuration changed", withAttempt(accepted(), step(session.StepAttempting, 1)),
			changed(current(), func(c *Current) { c.ConfigurationDigest = digestB }),
			`{"type":"blocked","reason":"configuration_changed"}`},
		{"attempt 1 open, environment change does not matter", withAttempt(accepted(), step(session.StepAttempting, 1)),
			changed(current(), func(c *Current) { c.EnvironmentIdentity = "elsewhere" }),
			`{"type":"startStep","stepKind":"assistant","attempt":2,"stepId":"step","contextThroughEntryId":"user"}`},
		{"compaction attempt 1 open", compaction(step(session.StepAttempting, 1)), current(),
			`{"type":"startStep","stepKind":"compaction","attempt":2,"stepId":"step","contextThroughEntryId":"through"}`},

		// 6. compaction settled
		{"compaction settled", compaction(settledCompaction), current(),
			`{"type":"finish","outcome":"completed","finalEntryId":"compaction-result"}`},
		{"compaction settled needs no matching configuration", compaction(settledCompaction),
			changed(current(), func(c *Current) { c.ConfigurationDigest = digestB; c.Tools = nil }),
			`{"type":"finish","outcome":"completed","finalEntryId":"compaction-result"}`},

		// 7. length with calls
		{"length with calls", runState(session.StopReasonLength, call("c0", "read", `{"path":"a"}`), call("c1", "bash", `{"comm`)), current(),
			`{"type":"appendSynthetic","results":[
				{"assistantEntryId":"asst","toolIndex":0,"toolCallId":"c0","toolName":"read",` + truncatedJSON + `},
				{"assistantEntryId":"asst","toolIndex":1,"toolCallId":"c1","toolName":"bash",` + truncatedJSON + `}]}`},
		{"length with calls answered", answer(answer(runState(session.StopReasonLength, call("c0", "read", `{}`), call("c1", "bash", `{`)), 0), 1), current(),
			`{"type":"finish","outcome":"completed","completion":"truncated","finalEntryId":"asst"}`},
		{"length with one call answered", answer(runState(session.StopReasonLength, call("c0", "read", `{}`), call("c1", "bash", `{`)), 0), current(),
			`{"type":"appendSynthetic","results":[{"assistantEntryId":"asst","toolIndex":1,"toolCallId":"c1","toolName":"bash",` + truncatedJSON + `}]}`},

		// 8. final entry
		{"final entry", runState(session.StopReasonStop), current(),
			`{"type":"finish","outcome":"completed","completion":"normal","finalEntryId":"asst"}`},

		// 9. first unanswered, unstarted call
		{"unknown tool", runState(session.StopReasonToolUse, call("c0", "write", `{}`)), current(),
			`{"type":"appendSynthetic","results":[{"assistantEntryId":"asst","toolIndex":0,"toolCallId":"c0","toolName":"write",` + unknownJSON + `}]}`},
		{"unknown beats invalid arguments", runState(session.StopReasonToolUse, call("c0", "write", `nope`)), current(),
			`{"type":"appendSynthetic","results":[{"assistantEntryId":"asst","toolIndex":0,"toolCallId":"c0","toolName":"write",` + unknownJSON + `}]}`},
		{"arguments not JSON", runState(session.StopReasonToolUse, call("c0", "read", `{"path":`)), current(),
			`{"type":"appendSynthetic","results":[{"assistantEntryId":"asst","toolIndex":0,"toolCallId":"c0","toolName":"read",` + invalidJSON + `}]}`},
		{"arguments an array", runState(session.StopReasonToolUse, call("c0", "read", `[{"path":"a"}]`)), current(),
			`{"type":"appendSynthetic","results":[{"assistantEntryId":"asst","toolIndex":0,"toolCallId":"c0","toolName":"read",` + invalidJSON + `}]}`},
		{"arguments with duplicate names", runState(session.StopReasonToolUse, call("c0", "read", `{"path":"a","path":"b"}`)), current(),
			`{"type":"appendSynthetic","results":[{"assistantEntryId":"asst","toolIndex":0,"toolCallId":"c0","toolName":"read",` + invalidJSON + `}]}`},
		{"arguments with a lone surrogate", runState(session.StopReasonToolUse, call("c0", "read", `{"path":"\ud800"}`)), current(),
			`{"type":"appendSynthetic","results":[{"assistantEntryId":"asst","toolIndex":0,"toolCallId":"c0","toolName":"read",` + invalidJSON + `}]}`},
		{"arguments empty", runState(session.StopReasonToolUse, call("c0", "read", ``)), current(),
			`{"type":"appendSynthetic","results":[{"assistantEntryId":"asst","toolIndex":0,"toolCallId":"c0","toolName":"read",` + invalidJSON + `}]}`},
		{"start tool", runState(session.StopReasonToolUse, call("c0", "bash", " { \"command\" : \"ls\" } ")), current(),
			`{"type":"startTool","mode":"start","assistantEntryId":"asst","toolIndex":0,"toolName":"bash","arguments":{"command":"ls"}}`},
		{"start second tool after first answered", answer(runState(session.StopReasonToolUse, call("c0", "nope", `{}`), call("c1", "read", `{"path":"b"}`)), 0), current(),
			`{"type":"startTool","mode":"start","assistantEntryId":"asst","toolIndex":1,"toolName":"read","arguments":{"path":"b"}}`},
		{"stop with calls runs the calls", runState(session.StopReasonStop, call("c0", "read", `{}`)), current(),
			`{"type":"startTool","mode":"start","assistantEntryId":"asst","toolIndex":0,"toolName":"read","arguments":{}}`},
		{"unstarted call ignores configuration change", runState(session.StopReasonToolUse, call("c0", "read", `{}`)),
			changed(current(), func(c *Current) { c.ConfigurationDigest = digestB }),
			`{"type":"startTool","mode":"start","assistantEntryId":"asst","toolIndex":0,"toolName":"read","arguments":{}}`},

		// 10. all answered
		{"all answered", answer(answer(start(runState(session.StopReasonToolUse, call("c0", "read", `{}`), call("c1", "nope", `{}`)),
			0, ReplaySafe, "builtin:read:v1", "env"), 0), 1), current(),
			`{"type":"startStep","stepKind":"assistant","attempt":1,"contextThroughEntryId":"result-c1"}`},

		// 11. started call without result
		{"pending, configuration changed", start(runState(session.StopReasonToolUse, call("c0", "bash", `{}`)), 0, ReplayNever, "builtin:bash:v1", "env"),
			changed(current(), func(c *Current) { c.ConfigurationDigest = digestB }),
			`{"type":"blocked","reason":"configuration_changed"}`},
		{"pending, environment changed", start(runState(session.StopReasonToolUse, call("c0", "bash", `{}`)), 0, ReplayNever, "builtin:bash:v1", "env"),
			changed(current(), func(c *Current) { c.EnvironmentIdentity = "elsewhere" }),
			`{"type":"blocked","reason":"environment_changed"}`},
		{"pending, tool missing", start(runState(session.StopReasonToolUse, call("c0", "read", `{}`)), 0, ReplaySafe, "builtin:read:v1", "env"),
			changed(current(), func(c *Current) { c.Tools = c.Tools[1:] }),
			`{"type":"blocked","reason":"configuration_changed"}`},
		{"pending never tool missing", start(runState(session.StopReasonToolUse, call("c0", "mcp_x", `{}`)), 0, ReplayNever, "mcp:x", "env"), current(),
			`{"type":"blocked","reason":"configuration_changed"}`},
		{"pending safe replays", start(runState(session.StopReasonToolUse, call("c0", "read", `{"path":"README.md"}`)), 0, ReplaySafe, "builtin:read:v1", "env"), current(),
			`{"type":"startTool","mode":"replay","assistantEntryId":"asst","toolIndex":0,"toolStartedId":"started-c0","toolName":"read","arguments":{"path":"README.md"}}`},
		{"replay declaration changed: now never", start(runState(session.StopReasonToolUse, call("c0", "read", `{}`)), 0, ReplaySafe, "builtin:read:v1", "env"),
			changed(current(), func(c *Current) { c.Tools[0].Replay = ReplayNever }),
			`{"type":"blocked","reason":"replay_declaration_changed"}`},
		{"replay declaration changed: other key", start(runState(session.StopReasonToolUse, call("c0", "read", `{}`)), 0, ReplaySafe, "builtin:read:v1", "env"),
			changed(current(), func(c *Current) { c.Tools[0].ReplayKey = "plugin:read:v1" }),
			`{"type":"blocked","reason":"replay_declaration_changed"}`},
		{"persisted never, now safe: interrupted", start(runState(session.StopReasonToolUse, call("c0", "read", `{}`)), 0, ReplayNever, "builtin:read:v1", "env"), current(),
			`{"type":"appendSynthetic","results":[{"assistantEntryId":"asst","toolIndex":0,"toolCallId":"c0","toolName":"read","toolStartedId":"started-c0","resultEntryId":"result-c0",` + interruptedJSON + `}]}`},
		{"pending earlier call decides before later unstarted call",
			start(runState(session.StopReasonToolUse, call("c0", "bash", `{}`), call("c1", "read", `{}`)), 0, ReplayNever, "builtin:bash:v1", "env"), current(),
			`{"type":"appendSynthetic","results":[{"assistantEntryId":"asst","toolIndex":0,"toolCallId":"c0","toolName":"bash","toolStartedId":"started-c0","resultEntryId":"result-c0",` + interruptedJSON + `}]}`},
		{"blocked earlier call stops later unstarted call",
			start(runState(session.StopReasonToolUse, call("c0", "bash", `{}`), call("c1", "read", `{}`)), 0, ReplayNever, "builtin:bash:v1", "env"),
			changed(current(), func(c *Current) { c.EnvironmentIdentity = "elsewhere" }),
			`{"type":"blocked","reason":"environment_changed"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkPlan(t, Plan(tt.state, tt.current), []byte(tt.want))
		})
	}
}

// TestPlanIsPure checks that planning twice gives the same action and does
// not touch the state or the current configuration.
func TestPlanIsPure(t *testing.T) {
	s := start(runState(session.StopReasonToolUse, call("c0", "read", `{"path":"x"}`)), 0, ReplaySafe, "builtin:read:v1", "env")
	cur := current()
	a1 := Plan(s, cur)
	tool := a1.(StartTool)
	tool.Arguments[2] = 'X' // the action must not alias the persisted arguments
	if got := string(s.Operation.ToolCalls[0].Arguments); got != `{"path":"x"}` {
		t.Fatalf("persisted arguments changed through the action: %s", got)
	}
	checkPlan(t, Plan(s, cur), []byte(`{"type":"startTool","mode":"replay","assistantEntryId":"asst","toolIndex":0,"toolStartedId":"started-c0","toolName":"read","arguments":{"path":"x"}}`))
}
