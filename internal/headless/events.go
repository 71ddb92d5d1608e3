package headless

import (
	"context"
	"encoding/json"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/cctools"
	"github.com/tiny-agent/tiny-go/internal/session"
)

// turn is what the driver keeps of the run in progress.
type turn struct {
	// mark is how many transcript messages are already reported.
	mark int
	// turns counts the model replies; maxTurnsHit is set when the run
	// was stopped for --max-turns.
	turns       int
	maxTurnsHit bool
	// budgetHit is set when the run was stopped for --max-budget-usd.
	budgetHit bool
	cost      float64
	api       time.Duration
	usage     session.Usage // of the latest reply
	total     session.Usage
	// tools are the calls reported, by id (for tool_use_result); ok the
	// ones that ran and succeeded (every other result, synthetic ones
	// included, is an error).
	tools   map[string]toolUse
	ok      map[string]bool
	denials []permissionDenial
	// msgID is the id of the reply in progress (message_start's), which
	// its assistant message carries too.
	msgID string
	// block is the content block of the reply streaming now ("thinking"
	// or "text", "" between blocks), index its index (partial messages).
	block string
	index int
}

type toolUse struct {
	tool string
	args jsontext.Value
}

// Events is the agent's event sink: the committed transcript is reported
// as assistant and user messages after each reply and each tool result,
// so what the SDK sees is what the session holds.
func (d *Driver) Events(ev agent.Event) {
	d.tmu.Lock()
	defer d.tmu.Unlock()
	t := d.turn
	if t == nil {
		return // recovery before the first turn
	}
	switch e := ev.(type) {
	case agent.ModelStarted:
		if d.opt.MaxTurns > 0 && t.turns >= d.opt.MaxTurns && !t.maxTurnsHit {
			t.maxTurnsHit = true
			d.stopBeforeRequest()
		}
		// As Claude Code's: the budget is checked before each model
		// request, so the reply that went past it is the last one paid.
		if d.opt.MaxBudgetUSD > 0 && d.spent+t.cost >= d.opt.MaxBudgetUSD && !t.budgetHit && !t.maxTurnsHit {
			t.budgetHit = true
			d.stopBeforeRequest()
		}
		if t.maxTurnsHit || t.budgetHit {
			return // the request is never sent
		}
		// The stream and the assistant message of this reply share its id.
		t.msgID = "msg_" + e.Model.AttemptID
		if d.opt.PartialMessages {
			d.emitPartial(map[string]any{"type": "message_start", "message": map[string]any{
				"id": t.msgID, "type": "message", "role": "assistant", "model": d.s.Model(), "content": []any{}}})
		}
	case agent.ModelReasoningDelta:
		d.streamDelta(t, "thinking", e.Text)
	case agent.ModelDelta:
		d.streamDelta(t, "text", e.Text)
	case agent.ModelCompleted:
		ok := e.Outcome.Outcome == "succeeded"
		if ok {
			t.turns++
			if e.Outcome.Usage != nil {
				t.usage = *e.Outcome.Usage
			}
		}
		// A failed reply the provider billed costs all the same.
		if e.Outcome.Cost != nil {
			t.cost += *e.Outcome.Cost
		}
		t.api += e.Outcome.Duration
		d.endStream(t, ok)
		d.flush(t)
	case agent.ToolCompleted:
		if e.Outcome.Outcome == "succeeded" {
			t.ok[e.Tool.ToolCallID] = true
		}
		d.flush(t)
	case agent.OperationStarted:
		if e.Kind == session.OperationCompaction {
			d.emitStatus("compacting", "")
		}
	case agent.OperationCompleted:
		if e.Result.Kind == session.OperationCompaction {
			res := "failed"
			if e.Result.Outcome == session.OutcomeCompleted {
				res = "success"
			}
			d.emitStatus("", res)
		}
		t.total = e.Outcome.Usage
		d.flush(t)
	}
}

// streamDelta reports a piece of the reply as Claude Code's stream
// events: a thinking block, then a text block, each opened on its first
// piece and closed when the next one opens or the reply ends.
func (d *Driver) streamDelta(t *turn, kind, text string) {
	if !d.opt.PartialMessages || text == "" {
		return
	}
	if t.block != kind {
		d.closeBlock(t)
		t.block = kind
		start := map[string]any{"type": kind, kind: ""}
		d.emitPartial(map[string]any{"type": "content_block_start", "index": t.index, "content_block": start})
	}
	delta := map[string]any{"type": "text_delta", "text": text}
	if kind == "thinking" {
		delta = map[string]any{"type": "thinking_delta", "thinking": text}
	}
	d.emitPartial(map[string]any{"type": "content_block_delta", "index": t.index, "delta": delta})
}

func (d *Driver) closeBlock(t *turn) {
	if t.block == "" {
		return
	}
	d.emitPartial(map[string]any{"type": "content_block_stop", "index": t.index})
	t.block = ""
	t.index++
}

// endStream ends the reply's stream: its tool calls, which the provider
// gives whole, each as a tool_use block with its input in one
// input_json_delta; then message_delta (stop reason, usage) when the reply
// succeeded, and message_stop.
func (d *Driver) endStream(t *turn, ok bool) {
	if !d.opt.PartialMessages {
		return
	}
	d.closeBlock(t)
	if ok {
		stop := "end_turn"
		if m := d.newAssistant(t); m != nil && len(m.ToolCalls) > 0 {
			stop = "tool_use"
			d.streamToolCalls(t, m)
		}
		u := usageOf(t.usage)
		d.emitPartial(map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": u})
	}
	t.index = 0
	d.emitPartial(map[string]any{"type": "message_stop"})
}

// newAssistant is the assistant message committed since the last flush.
func (d *Driver) newAssistant(t *turn) *session.Message {
	st := d.s.State()
	for i := len(st.Transcript) - 1; i >= t.mark; i-- {
		if st.Transcript[i].Role == session.RoleAssistant {
			return &st.Transcript[i]
		}
	}
	return nil
}

func (d *Driver) streamToolCalls(t *turn, m *session.Message) {
	for _, c := range m.ToolCalls {
		args := jsontext.Value(c.Function.Arguments)
		if !json.Valid(args) {
			args = jsontext.Value("{}")
		}
		cc := cctools.ToClaude(c.Function.Name, args, d.s.WorkDir())
		d.emitPartial(map[string]any{"type": "content_block_start", "index": t.index, "content_block": map[string]any{
			"type": "tool_use", "id": c.ID, "name": cc.Name, "input": map[string]any{}}})
		d.emitPartial(map[string]any{"type": "content_block_delta", "index": t.index, "delta": map[string]any{
			"type": "input_json_delta", "partial_json": string(cc.Input)}})
		d.emitPartial(map[string]any{"type": "content_block_stop", "index": t.index})
		t.index++
	}
}

func (d *Driver) emitPartial(ev map[string]any) {
	d.emit(streamEvent{Type: streamEventType, Event: ev, SessionID: d.s.ID(), UUID: newUUID()})
}

// flush reports the transcript messages committed since the last flush.
// The caller holds tmu.
func (d *Driver) flush(t *turn) {
	st := d.s.State()
	for i := t.mark; i < len(st.Transcript); i++ {
		m := st.Transcript[i]
		switch m.Role {
		case session.RoleAssistant:
			d.emitAssistant(t, m, st.TranscriptEntryIDs[i])
		case session.RoleTool:
			d.emitToolResult(t, m)
		}
	}
	if len(st.Transcript) > t.mark {
		t.mark = len(st.Transcript)
	}
}

func (d *Driver) emitAssistant(t *turn, m session.Message, entryID string) {
	var content []block
	if m.Content != nil && *m.Content != "" {
		content = append(content, block{Type: "text", Text: m.Content})
	}
	for _, c := range m.ToolCalls {
		args := jsontext.Value(c.Function.Arguments)
		if !json.Valid(args) {
			args = jsontext.Value("{}")
		}
		cc := cctools.ToClaude(c.Function.Name, args, d.s.WorkDir())
		t.tools[c.ID] = toolUse{tool: c.Function.Name, args: args}
		content = append(content, block{Type: "tool_use", ID: c.ID, Name: cc.Name, Input: json.RawMessage(cc.Input)})
	}
	stop := "end_turn"
	if len(m.ToolCalls) > 0 {
		stop = "tool_use"
	}
	u := usageOf(t.usage)
	id := "msg_" + entryID
	if t.msgID != "" {
		id, t.msgID = t.msgID, "" // the id its stream events carried
	}
	d.emit(assistantMessage{Type: "assistant", SessionID: d.s.ID(), UUID: newUUID(), Timestamp: now(), Message: apiMessage{
		ID: id, Type: "message", Role: "assistant", Model: d.s.Model(),
		Content: nonNilBlocks(content), StopReason: &stop, Usage: &u,
	}})
}

func (d *Driver) emitToolResult(t *turn, m session.Message) {
	text := ""
	if m.Content != nil {
		text = *m.Content
	}
	isErr := !t.ok[m.ToolCallID]
	msg := userMessage{Type: "user", SessionID: d.s.ID(), UUID: newUUID(), Timestamp: now(), Message: userBody{Role: "user", Content: []block{{
		Type: "tool_result", ToolUseID: m.ToolCallID, Content: &text, IsError: &isErr,
	}}}}
	if u, ok := t.tools[m.ToolCallID]; ok {
		msg.ToolUseResult = json.RawMessage(cctools.Response(u.tool, u.args, d.s.WorkDir(), text, isErr))
	}
	d.emit(msg)
}

func nonNilBlocks(b []block) []block {
	if b == nil {
		return []block{}
	}
	return b
}

// writeInit reports the session as Claude Code's system/init.
func (d *Driver) writeInit() {
	var tools []string
	seen := map[string]bool{}
	for _, name := range d.s.Tools() {
		for _, n := range claudeNames(name) {
			if !seen[n] {
				seen[n] = true
				tools = append(tools, n)
			}
		}
	}
	servers := []mcpStatus{}
	for _, a := range d.s.MCPServers() {
		servers = append(servers, mcpStatus{Name: a, Status: "connected"})
	}
	d.mu.Lock()
	mode, keySource := d.mode, d.keySource
	d.mu.Unlock()
	if keySource == "" {
		keySource = "none"
	}
	d.emit(initMessage{Type: "system", Subtype: "init", CWD: d.s.WorkDir(), SessionID: d.s.ID(),
		Tools: nonNil(tools), MCPServers: servers, Model: d.s.Model(), PermissionMode: string(mode),
		SlashCommands: []string{"compact"}, APIKeySource: keySource, Version: d.opt.Version + " (tiny-go)",
		OutputStyle: "default", Skills: []string{}, Plugins: []string{}, Agents: []string{}, UUID: newUUID()})
}

// claudeNames are the Claude Code tools one tiny-go tool stands for: bg
// is Bash in the background, BashOutput and KillShell.
func claudeNames(tool string) []string {
	if tool == "bg" {
		return []string{cctools.Bash, cctools.BashOutput, cctools.KillShell}
	}
	return []string{cctools.ClaudeName(tool)}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// stopBeforeRequest aborts the run from the handler of ModelStarted, so
// that the request about to start is never sent: the abort runs on its own
// goroutine (it delivers events, which this handler is delivering), and
// the handler returns once the abort is committed, which the agent checks
// before it sends a request.
func (d *Driver) stopBeforeRequest() {
	go d.abortRun(context.Background())
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		if op := d.s.State().Operation; op == nil || op.AbortRequested {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// emitStatus writes Claude Code's system/status: "compacting" while the
// conversation is summarized, then no status with how it went.
func (d *Driver) emitStatus(status, compactResult string) {
	d.mu.Lock()
	mode := d.mode
	d.mu.Unlock()
	m := map[string]any{"type": "system", "subtype": "status", "status": nil, "permissionMode": mode, "uuid": newUUID(), "session_id": d.s.ID()}
	if status != "" {
		m["status"] = status
	}
	if compactResult != "" {
		m["compact_result"] = compactResult
	}
	d.emit(m)
}
