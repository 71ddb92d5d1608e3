package lifecycle

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tiny-agent/tiny-go/internal/session"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func newTestOTel(t *testing.T, env map[string]string, timeout time.Duration) Sink {
	t.Helper()
	s, err := NewOTel(context.Background(), OTelConfig{Getenv: envOf(env), Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	if _, off := s.(Nop); off {
		t.Fatal("tracing is off")
	}
	return s
}

// Strings that must never reach the collector.
const (
	secretAnswer  = "ANSWER-SECRET the final answer"
	secretMessage = "ERRMSG-SECRET provider said 500"
	secretType    = "Error: PROMPT-SECRET cannot open /etc/passwd" // free text posing as an error type
	secretHeader  = "Bearer HEADER-SECRET-123"
)

// clock hands out strictly increasing event times.
type clock struct{ t time.Time }

func (c *clock) next() time.Time {
	c.t = c.t.Add(10 * time.Millisecond)
	return c.t
}

func TestOTelSpansFromRealisticEvents(t *testing.T) {
	col := newCollector(t, nil)
	env := map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT": col.srv.URL + "/otlp", // base URL: /v1/traces is appended
		"OTEL_EXPORTER_OTLP_HEADERS":  "Authorization=" + strings.ReplaceAll(secretHeader, " ", "%20"),
		"OTEL_SERVICE_NAME":           "tiny-test",
	}
	clk := &clock{t: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)}
	at := func(e Event) Event { return e.At(clk.next()) }
	u1 := Usage{Input: 100, Output: 20, CacheRead: 50, CacheWrite: 10}

	// Process 1: startup with one MCP server, a run with a read, a run
	// whose bash is cancelled, a failed run, and a run left open at exit.
	p1 := newTestOTel(t, env, 0)
	p1.Emit(at(StartupStarted("openai/gpt-test", []string{"plug"}, []string{"fs"})))
	p1.Emit(at(SessionAttached("sess-1", false)))
	p1.Emit(at(MCPStarted("fs")))
	p1.Emit(at(MCPConnected("fs", 10*time.Millisecond, "2025-06-18", 3)))
	p1.Emit(at(StartupCompleted(40*time.Millisecond, Succeeded, "")))

	op1 := Op{SessionID: "sess-1", OperationID: "op-1", Kind: session.OperationRun}
	a1 := ModelAttempt{Op: op1, StepID: "step-1", AttemptID: "att-1", Number: 1}
	read := ToolRun{Op: op1, StepID: "step-1", AttemptID: "tatt-1", ParentAttemptID: "att-1", ToolStartedID: "ts-1", ToolCallID: "call-1", Tool: "read"}
	a2 := ModelAttempt{Op: op1, StepID: "step-2", AttemptID: "att-2", Number: 1}
	opStart := clk.next()
	p1.Emit(OperationStarted(op1).At(opStart))
	p1.Emit(at(ModelStarted(a1)))
	p1.Emit(at(ModelCompleted(a1, 10*time.Millisecond, Succeeded, &u1, "")))
	p1.Emit(at(ToolAdmitted(op1, "step-1", "ts-1", "call-1", "read", "safe")))
	p1.Emit(at(ToolStarted(read)))
	p1.Emit(at(ToolCompleted(read, 10*time.Millisecond, Succeeded)))
	p1.Emit(at(ModelStarted(a2)))
	p1.Emit(at(ModelCompleted(a2, 10*time.Millisecond, Succeeded, &Usage{Input: 5, Output: 7}, "")))
	p1.Emit(at(OperationCompleted(op1, 80*time.Millisecond, Result{Outcome: Succeeded, Completion: session.CompletionNormal, Answer: secretAnswer, Usage: u1})))

	op2 := Op{SessionID: "sess-1", OperationID: "op-2", Kind: session.OperationRun}
	a3 := ModelAttempt{Op: op2, StepID: "step-3", AttemptID: "att-3", Number: 1}
	bash := ToolRun{Op: op2, StepID: "step-3", AttemptID: "tatt-2", ParentAttemptID: "att-3", ToolStartedID: "ts-2", ToolCallID: "call-2", Tool: "bash"}
	p1.Emit(at(OperationStarted(op2)))
	p1.Emit(at(ModelStarted(a3)))
	p1.Emit(at(ModelCompleted(a3, 10*time.Millisecond, Succeeded, &Usage{}, "")))
	p1.Emit(at(ToolAdmitted(op2, "step-3", "ts-2", "call-2", "bash", "never")))
	p1.Emit(at(ToolStarted(bash)))
	p1.Emit(at(CancelRequested(op2, session.PhaseTool, "call-2")))
	p1.Emit(at(ToolCompleted(bash, 20*time.Millisecond, ToolOutcome(session.ResultInterrupted))))
	p1.Emit(at(OperationCompleted(op2, 60*time.Millisecond, Result{Outcome: Cancelled})))

	op3 := Op{SessionID: "sess-1", OperationID: "op-3", Kind: session.OperationRun}
	a4 := ModelAttempt{Op: op3, StepID: "step-4", AttemptID: "att-4", Number: 1}
	p1.Emit(at(OperationStarted(op3)))
	p1.Emit(at(ModelStarted(a4)))
	p1.Emit(at(ModelCompleted(a4, 10*time.Millisecond, Failed, nil, secretType)))
	p1.Emit(at(OperationCompleted(op3, 20*time.Millisecond, Result{Outcome: Failed, ErrorType: "model_error", ErrorMessage: secretMessage})))

	opR := Op{SessionID: "sess-1", OperationID: "op-r", Kind: session.OperationCompaction}
	aR := ModelAttempt{Op: opR, StepID: "step-r", AttemptID: "att-r1", Number: 1}
	p1.Emit(at(OperationStarted(opR)))
	p1.Emit(at(ModelStarted(aR)))
	if err := p1.Close(context.Background()); err != nil { // exit with opR open
		t.Fatalf("Close: %v", err)
	}
	p1.Emit(at(OperationStarted(op1))) // after Close: dropped

	// Process 2 recovers op-r: reconciles the dead attempt and retries.
	p2 := newTestOTel(t, env, 0)
	p2.Emit(at(StartupStarted("openai/gpt-test", nil, nil)))
	p2.Emit(at(SessionAttached("sess-1", true)))
	p2.Emit(at(StartupCompleted(10*time.Millisecond, Succeeded, "")))
	opR.Recovery = true
	aR2 := ModelAttempt{Op: opR, StepID: "step-r", AttemptID: "att-r2", Number: 2}
	p2.Emit(at(OperationRecovered(opR)))
	p2.Emit(at(ModelReconciled(ModelAttempt{Op: opR, StepID: "step-r", AttemptID: "att-r1"}, Failed, "model_error")))
	p2.Emit(at(ModelStarted(aR2)))
	p2.Emit(at(ModelCompleted(aR2, 10*time.Millisecond, Succeeded, &u1, "")))
	p2.Emit(at(OperationCompleted(opR, 30*time.Millisecond, Result{Outcome: Succeeded, Usage: u1})))
	if err := p2.Close(context.Background()); err != nil {
		t.Fatalf("Close: %v", err)
	}

	spans := col.spans()
	if len(spans) == 0 {
		t.Fatal("collector received no spans")
	}
	for _, p := range col.paths {
		if p != "/otlp/v1/traces" {
			t.Errorf("export path %q, want /otlp/v1/traces", p)
		}
	}
	for _, h := range col.headers {
		if h.Get("Authorization") != secretHeader {
			t.Errorf("Authorization header %q not sent", h.Get("Authorization"))
		}
	}

	// Resource, scope, and tiny.outcome on every span.
	for _, s := range spans {
		if got := str(s.resource["service.name"]); got != "tiny-test" {
			t.Errorf("service.name = %q", got)
		}
		if got := str(s.resource["openinference.project.name"]); got != "tiny-test" {
			t.Errorf("openinference.project.name = %q", got)
		}
		if s.scope != TracerName {
			t.Errorf("scope %q, want %q", s.scope, TracerName)
		}
		if _, ok := attrMap(s.span.GetAttributes())["tiny.outcome"]; !ok {
			t.Errorf("%s has no tiny.outcome", s.span.GetName())
		}
		a := attrMap(s.span.GetAttributes())
		_, hasModel := a["gen_ai.request.model"]
		if hasModel != (s.span.GetName() == SpanModel) {
			t.Errorf("%s: gen_ai.request.model present=%v; the model belongs on LLM spans only", s.span.GetName(), hasModel)
		}
	}

	byName := map[string][]*tracepb.Span{}
	for _, s := range spans {
		byName[s.span.GetName()] = append(byName[s.span.GetName()], s.span)
	}
	counts := map[string]int{SpanStartup: 2, SpanMCPConnect: 1, SpanOperation: 5, SpanModel: 6, SpanTool: 2}
	for name, n := range counts {
		if len(byName[name]) != n {
			t.Errorf("%d %s spans, want %d", len(byName[name]), name, n)
		}
	}
	if len(spans) != 16 {
		t.Errorf("%d spans, want 16", len(spans))
	}
	find := func(name, key, val string) *tracepb.Span {
		t.Helper()
		for _, sp := range byName[name] {
			if str(attrMap(sp.GetAttributes())[key]) == val {
				return sp
			}
		}
		t.Fatalf("no %s span with %s=%s", name, key, val)
		return nil
	}

	// Startup and MCP.
	mcp := byName[SpanMCPConnect][0]
	st := byName[SpanStartup][0]
	if b, _ := boolAttr(st, "tiny.session.resumed"); b {
		st = byName[SpanStartup][1]
	}
	if len(st.GetParentSpanId()) != 0 {
		t.Error("tiny.startup is not a root")
	}
	if string(mcp.GetParentSpanId()) != string(st.GetSpanId()) || string(mcp.GetTraceId()) != string(st.GetTraceId()) {
		t.Error("tiny.mcp.connect is not a child of tiny.startup")
	}
	wantAttrs(t, st, map[string]any{"tiny.outcome": "succeeded", "session.id": "sess-1", "tiny.session.id": "sess-1"})
	wantAttrs(t, mcp, map[string]any{"tiny.outcome": "succeeded", "tiny.mcp.server": "fs", "tiny.mcp.tool_count": int64(3), "tiny.mcp.protocol_version": "2025-06-18"})
	wantStatus(t, st, tracepb.Status_STATUS_CODE_OK)

	// The successful run: root AGENT span with LLM and TOOL children.
	o1 := find(SpanOperation, "tiny.operation.id", "op-1")
	if len(o1.GetParentSpanId()) != 0 {
		t.Error("operation span is not a root")
	}
	if o1.GetStartTimeUnixNano() != uint64(opStart.UnixNano()) {
		t.Errorf("operation span starts at %d, want the event time %d", o1.GetStartTimeUnixNano(), opStart.UnixNano())
	}
	wantAttrs(t, o1, map[string]any{
		"openinference.span.kind": "AGENT", "gen_ai.operation.name": "invoke_agent",
		"session.id": "sess-1", "gen_ai.conversation.id": "sess-1", "tiny.session.id": "sess-1",
		"tiny.operation.kind": "run", "tiny.recovery": false, "tiny.outcome": "succeeded",
	})
	wantStatus(t, o1, tracepb.Status_STATUS_CODE_OK)
	m1 := find(SpanModel, "tiny.attempt.id", "att-1")
	wantChild(t, m1, o1)
	wantAttrs(t, m1, map[string]any{
		"openinference.span.kind": "LLM", "gen_ai.operation.name": "chat",
		"gen_ai.request.model": "openai/gpt-test", "llm.model_name": "openai/gpt-test",
		"tiny.operation.id": "op-1", "tiny.step.id": "step-1", "tiny.attempt.number": int64(1),
		"gen_ai.usage.input_tokens": int64(160), "gen_ai.usage.output_tokens": int64(20),
		"gen_ai.usage.cache_read.input_tokens": int64(50), "gen_ai.usage.cache_creation.input_tokens": int64(10),
		"llm.token_count.prompt": int64(160), "llm.token_count.completion": int64(20), "llm.token_count.total": int64(180),
		"tiny.usage.input_tokens": int64(100), "tiny.usage.cache_read_tokens": int64(50), "tiny.usage.cache_write_tokens": int64(10),
		"tiny.outcome": "succeeded",
	})
	wantStatus(t, m1, tracepb.Status_STATUS_CODE_OK)
	wantChild(t, find(SpanModel, "tiny.attempt.id", "att-2"), o1)
	tr := find(SpanTool, "tiny.tool.started.id", "ts-1")
	wantChild(t, tr, o1)
	wantAttrs(t, tr, map[string]any{
		"openinference.span.kind": "TOOL", "gen_ai.operation.name": "execute_tool",
		"gen_ai.tool.name": "read", "tool.name": "read", "gen_ai.tool.call.id": "call-1",
		"tiny.attempt.id": "tatt-1", "tiny.parent_attempt.id": "att-1", "tiny.step.id": "step-1",
		"tiny.operation.id": "op-1", "tiny.outcome": "succeeded",
	})
	wantStatus(t, tr, tracepb.Status_STATUS_CODE_OK)
	wantEvents(t, o1, "tool.admitted")
	ev := o1.GetEvents()[0]
	if a := attrMap(ev.GetAttributes()); str(a["tiny.tool.started.id"]) != "ts-1" || str(a["tiny.tool.replay"]) != "safe" || str(a["gen_ai.tool.call.id"]) != "call-1" {
		t.Errorf("tool.admitted event attributes: %v", ev.GetAttributes())
	}

	// The cancelled run: status Unset, no error.type.
	o2 := find(SpanOperation, "tiny.operation.id", "op-2")
	tb := find(SpanTool, "tiny.tool.started.id", "ts-2")
	wantChild(t, tb, o2)
	for _, sp := range []*tracepb.Span{o2, tb} {
		wantAttrs(t, sp, map[string]any{"tiny.outcome": "cancelled"})
		wantStatus(t, sp, tracepb.Status_STATUS_CODE_UNSET)
		if _, ok := attrMap(sp.GetAttributes())["error.type"]; ok {
			t.Errorf("cancelled %s has error.type", sp.GetName())
		}
	}
	wantEvents(t, o2, "tool.admitted", "cancel.requested")
	if a := attrMap(o2.GetEvents()[1].GetAttributes()); str(a["tiny.cancel.phase"]) != "tool" || str(a["gen_ai.tool.call.id"]) != "call-2" {
		t.Errorf("cancel.requested attributes: %v", o2.GetEvents()[1].GetAttributes())
	}

	// The failed run: status Error with a bounded error.type.
	o3 := find(SpanOperation, "tiny.operation.id", "op-3")
	wantAttrs(t, o3, map[string]any{"tiny.outcome": "failed", "error.type": "model_error"})
	wantStatus(t, o3, tracepb.Status_STATUS_CODE_ERROR)
	m4 := find(SpanModel, "tiny.attempt.id", "att-4")
	wantAttrs(t, m4, map[string]any{"tiny.outcome": "failed", "error.type": "_OTHER"})
	wantStatus(t, m4, tracepb.Status_STATUS_CODE_ERROR)

	// The operation open at exit ends effect_unknown; its recovery in the
	// next process reuses tiny.operation.id.
	var rs []*tracepb.Span
	for _, sp := range byName[SpanOperation] {
		if str(attrMap(sp.GetAttributes())["tiny.operation.id"]) == "op-r" {
			rs = append(rs, sp)
		}
	}
	if len(rs) != 2 {
		t.Fatalf("%d op-r spans, want 2", len(rs))
	}
	dead, rec := rs[0], rs[1]
	if b, _ := boolAttr(dead, "tiny.recovery"); b {
		dead, rec = rec, dead
	}
	wantAttrs(t, dead, map[string]any{"tiny.outcome": "effect_unknown", "error.type": "effect_unknown", "tiny.recovery": false, "tiny.operation.kind": "compaction"})
	wantStatus(t, dead, tracepb.Status_STATUS_CODE_ERROR)
	wantAttrs(t, find(SpanModel, "tiny.attempt.id", "att-r1"), map[string]any{"tiny.outcome": "effect_unknown"})
	wantAttrs(t, rec, map[string]any{"tiny.outcome": "succeeded", "tiny.recovery": true})
	wantEvents(t, rec, "model.reconciled")
	if a := attrMap(rec.GetEvents()[0].GetAttributes()); str(a["tiny.attempt.id"]) != "att-r1" || str(a["error.type"]) != "model_error" {
		t.Errorf("model.reconciled attributes: %v", rec.GetEvents()[0].GetAttributes())
	}
	wantChild(t, find(SpanModel, "tiny.attempt.id", "att-r2"), rec)
	if string(rec.GetTraceId()) == string(dead.GetTraceId()) {
		t.Error("recovered operation shares the dead process's trace")
	}

	// Privacy: nothing secret anywhere in the exported bytes.
	body := col.body()
	for _, s := range []string{"ANSWER-SECRET", "ERRMSG-SECRET", "PROMPT-SECRET", "HEADER-SECRET", "/etc/passwd",
		col.srv.URL, strings.TrimPrefix(col.srv.URL, "http://"), "127.0.0.1", "http://", "/otlp"} {
		if strings.Contains(string(body), s) {
			t.Errorf("exported bytes contain %q", s)
		}
	}
}

func str(v *commonpb.AnyValue) string { return v.GetStringValue() }

func boolAttr(sp *tracepb.Span, key string) (bool, bool) {
	v, ok := attrMap(sp.GetAttributes())[key]
	return v.GetBoolValue(), ok
}

func wantAttrs(t *testing.T, sp *tracepb.Span, want map[string]any) {
	t.Helper()
	got := attrMap(sp.GetAttributes())
	for k, w := range want {
		v, ok := got[k]
		if !ok {
			t.Errorf("%s: missing %s", sp.GetName(), k)
			continue
		}
		var g any
		switch w.(type) {
		case string:
			g = v.GetStringValue()
		case int64:
			g = v.GetIntValue()
		case bool:
			g = v.GetBoolValue()
		}
		if g != w {
			t.Errorf("%s: %s = %v, want %v", sp.GetName(), k, g, w)
		}
	}
}

func wantStatus(t *testing.T, sp *tracepb.Span, code tracepb.Status_StatusCode) {
	t.Helper()
	if got := sp.GetStatus().GetCode(); got != code {
		t.Errorf("%s status %v, want %v", sp.GetName(), got, code)
	}
	if msg := sp.GetStatus().GetMessage(); msg != "" {
		t.Errorf("%s status message %q; error text must not be exported", sp.GetName(), msg)
	}
}

func wantChild(t *testing.T, child, parent *tracepb.Span) {
	t.Helper()
	if string(child.GetParentSpanId()) != string(parent.GetSpanId()) || string(child.GetTraceId()) != string(parent.GetTraceId()) {
		t.Errorf("%s is not a child of %s", child.GetName(), parent.GetName())
	}
}

func wantEvents(t *testing.T, sp *tracepb.Span, names ...string) {
	t.Helper()
	var got []string
	for _, e := range sp.GetEvents() {
		got = append(got, e.GetName())
	}
	if strings.Join(got, ",") != strings.Join(names, ",") {
		t.Errorf("%s events %v, want %v", sp.GetName(), got, names)
	}
}

func TestOTelTracesEndpointAsIsWithGzip(t *testing.T) {
	col := newCollector(t, nil)
	s := newTestOTel(t, map[string]string{
		"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT":    col.srv.URL + "/custom/traces",
		"OTEL_EXPORTER_OTLP_ENDPOINT":           "http://127.0.0.1:1", // loses to the per-signal URL
		"OTEL_EXPORTER_OTLP_TRACES_COMPRESSION": "gzip",
	}, 0)
	s.Emit(OperationStarted(testOp))
	s.Emit(OperationCompleted(testOp, 0, Result{Outcome: Succeeded}))
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(col.paths) == 0 || col.paths[0] != "/custom/traces" {
		t.Fatalf("paths %v, want [/custom/traces]", col.paths)
	}
	if enc := col.headers[0].Get("Content-Encoding"); enc != "gzip" {
		t.Errorf("Content-Encoding %q, want gzip", enc)
	}
	sp := col.spans()
	if len(sp) != 1 || str(sp[0].resource["service.name"]) != "tiny-go" || str(sp[0].resource["openinference.project.name"]) != "tiny-go" {
		t.Errorf("want one span with the default service name, got %d", len(sp))
	}
}

func TestOTelBoundedShutdownWhenCollectorHangs(t *testing.T) {
	col := newCollector(t, make(chan struct{}))
	s := newTestOTel(t, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": col.srv.URL}, 300*time.Millisecond)
	begin := time.Now()
	for range 100 { // Emit never waits for the collector
		s.Emit(OperationStarted(testOp))
		s.Emit(OperationCompleted(testOp, 0, Result{Outcome: Succeeded}))
	}
	if d := time.Since(begin); d > time.Second {
		t.Errorf("Emit took %v with a hanging collector", d)
	}
	begin = time.Now()
	err := s.Close(context.Background())
	d := time.Since(begin)
	// The flush deadline and the export request's own timeout are both the
	// 300ms bound; whichever fires first, Close reports a failure.
	if err == nil {
		t.Error("Close = nil, want a timeout or failed-export error")
	}
	if d > 2*time.Second {
		t.Errorf("Close took %v, want about the 300ms bound", d)
	}
	if err != nil && strings.Contains(err.Error(), "127.0.0.1") {
		t.Errorf("Close error quotes the endpoint: %v", err)
	}
	if err := s.Close(context.Background()); err != nil {
		t.Errorf("second Close = %v", err)
	}

	// The caller's context bounds Close too.
	s = newTestOTel(t, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": col.srv.URL}, time.Minute)
	s.Emit(OperationStarted(testOp))
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	begin = time.Now()
	if err := s.Close(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Close = %v, want a deadline error", err)
	}
	if d := time.Since(begin); d > 2*time.Second {
		t.Errorf("Close took %v despite a 200ms context", d)
	}
}

func TestOTelUnreachableCollectorDoesNotFailEmit(t *testing.T) {
	col := newCollector(t, nil)
	url := col.srv.URL
	col.srv.Close() // nothing listens any more
	s := newTestOTel(t, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": url}, 300*time.Millisecond)
	s.Emit(OperationStarted(testOp))
	s.Emit(OperationCompleted(testOp, 0, Result{Outcome: Succeeded}))
	begin := time.Now()
	err := s.Close(context.Background())
	if err == nil {
		t.Error("Close = nil with no collector")
	} else if strings.Contains(err.Error(), strings.TrimPrefix(url, "http://")) || strings.Contains(err.Error(), "\n") {
		t.Errorf("Close error quotes the endpoint: %v", err)
	}
	if d := time.Since(begin); d > 2*time.Second {
		t.Errorf("Close took %v", d)
	}
}

// The agent's wiring: one event stream into Tracker(Multi(JSON, OTel)).
// At exit the open model attempt ends effect_unknown in both projections,
// and the open operation span too.
func TestTrackerJSONAndOTelTogether(t *testing.T) {
	col := newCollector(t, nil)
	var out bytes.Buffer
	jl := NewJSONLines(&out)
	sink := NewTracker(Multi(jl, newTestOTel(t, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": col.srv.URL}, 0)))

	att := ModelAttempt{Op: testOp, StepID: "st1", AttemptID: "at1", Number: 1, Model: "per-attempt/model"}
	sink.Emit(StartupStarted("startup/model", nil, nil))
	sink.Emit(StartupCompleted(time.Millisecond, Succeeded, ""))
	sink.Emit(OperationStarted(testOp))
	sink.Emit(ModelStarted(att).At(time.Now().Add(-50 * time.Millisecond)))
	if err := sink.Close(context.Background()); err != nil {
		t.Fatal(err)
	}

	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 5 || !strings.Contains(lines[4], `"type":"model.completed"`) || !strings.Contains(lines[4], `"outcome":"effect_unknown"`) {
		t.Fatalf("JSON lines:\n%s", out.String())
	}
	if strings.Contains(out.String(), "per-attempt/model") {
		t.Error("model.started serialized the attempt's model")
	}
	var model, op *tracepb.Span
	for _, s := range col.spans() {
		switch s.span.GetName() {
		case SpanModel:
			model = s.span
		case SpanOperation:
			op = s.span
		}
	}
	if model == nil || op == nil {
		t.Fatalf("spans: %d", len(col.spans()))
	}
	wantChild(t, model, op)
	wantAttrs(t, model, map[string]any{"tiny.outcome": "effect_unknown", "gen_ai.request.model": "per-attempt/model", "llm.model_name": "per-attempt/model"})
	wantAttrs(t, op, map[string]any{"tiny.outcome": "effect_unknown"})
	if d := model.GetEndTimeUnixNano() - model.GetStartTimeUnixNano(); d < uint64(50*time.Millisecond) {
		t.Errorf("model span lasted %v", time.Duration(d))
	}
}
