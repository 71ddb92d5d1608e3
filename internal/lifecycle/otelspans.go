package lifecycle

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// Span names of events.md.
const (
	SpanStartup    = "tiny.startup"
	SpanMCPConnect = "tiny.mcp.connect"
	SpanOperation  = "tiny.agent.operation"
	SpanModel      = "tiny.model.request"
	SpanTool       = "tiny.tool.execute"
)

// openSpan is a span and the context that parents its children.
type openSpan struct {
	ctx  context.Context
	span trace.Span
}

// spanState turns events into spans, correlating completions with their
// starts by server (MCP), operationId, model attemptId and toolStartedId.
// It is not safe for concurrent use; otelSink serializes calls.
type spanState struct {
	tracer  trace.Tracer
	model   string // from startup.started, for LLM spans
	startup *openSpan
	mcp     map[string]*openSpan
	ops     map[string]*openSpan
	models  map[string]*openSpan
	tools   map[string]*openSpan
}

func (s *spanState) init(t trace.Tracer) {
	s.tracer = t
	s.mcp = map[string]*openSpan{}
	s.ops = map[string]*openSpan{}
	s.models = map[string]*openSpan{}
	s.tools = map[string]*openSpan{}
}

func (s *spanState) apply(e Event) {
	switch e.Name {
	case NameStartupStarted:
		s.model = e.Model
		if s.startup != nil {
			end(s.startup, EffectUnknown, "", e.Time)
		}
		s.startup = s.start(nil, SpanStartup, e.Time, attribute.String("tiny.runtime", Runtime))
	case NameSessionAttached:
		if s.startup != nil {
			s.startup.span.SetAttributes(sessionAttrs(e.SessionID)...)
			s.startup.span.SetAttributes(attribute.Bool("tiny.session.resumed", e.Resumed))
		}
	case NameMCPStarted:
		s.replace(s.mcp, e.Server, s.start(s.startup, SpanMCPConnect, e.Time, mcpAttrs(e)...), e.Time)
	case NameMCPCompleted:
		sp := s.take(s.mcp, e.Server, s.startup, SpanMCPConnect, e, mcpAttrs(e))
		if e.ProtocolVersion != "" {
			sp.span.SetAttributes(attribute.String("tiny.mcp.protocol_version", e.ProtocolVersion))
		}
		if e.ToolCount != nil {
			sp.span.SetAttributes(attribute.Int("tiny.mcp.tool_count", *e.ToolCount))
		}
		end(sp, e.Outcome, e.ErrorType, e.Time)
	case NameStartupCompleted:
		if s.startup == nil {
			s.startup = s.start(nil, SpanStartup, e.Time.Add(-duration(e)), attribute.String("tiny.runtime", Runtime))
		}
		end(s.startup, e.Outcome, e.ErrorType, e.Time)
		s.startup = nil

	case NameOperationStarted, NameOperationRecovered:
		s.replace(s.ops, e.OperationID, s.start(nil, SpanOperation, e.Time, opSpanAttrs(e)...), e.Time)
	case NameOperationCompleted:
		sp := s.take(s.ops, e.OperationID, nil, SpanOperation, e, opSpanAttrs(e))
		end(sp, e.Outcome, e.ErrorType, e.Time)
	case NameToolAdmitted:
		s.event(e, attribute.String("tiny.step.id", e.StepID),
			attribute.String("tiny.tool.started.id", e.ToolStartedID),
			attribute.String("gen_ai.tool.call.id", e.ToolCallID),
			attribute.String("gen_ai.tool.name", e.Tool),
			attribute.String("tiny.tool.replay", e.Replay))
	case NameCancelRequested:
		attrs := []attribute.KeyValue{attribute.String("tiny.cancel.phase", string(e.Phase))}
		if e.ToolCallID != "" {
			attrs = append(attrs, attribute.String("gen_ai.tool.call.id", e.ToolCallID))
		}
		s.event(e, attrs...)
	case NameModelReconciled:
		attrs := []attribute.KeyValue{
			attribute.String("tiny.step.id", e.StepID),
			attribute.String("tiny.attempt.id", e.AttemptID),
			attribute.String("tiny.outcome", string(e.Outcome)),
		}
		if e.Outcome != Succeeded && e.Outcome != Cancelled {
			attrs = append(attrs, attribute.String("error.type", boundedErrorType(e.ErrorType, e.Outcome)))
		}
		s.event(e, attrs...)

	case NameModelStarted:
		s.replace(s.models, e.AttemptID, s.start(s.ops[e.OperationID], SpanModel, e.Time, s.modelAttrs(e)...), e.Time)
	case NameModelCompleted:
		sp := s.take(s.models, e.AttemptID, s.ops[e.OperationID], SpanModel, e, s.modelAttrs(e))
		if e.Usage != nil {
			sp.span.SetAttributes(usageAttrs(*e.Usage)...)
		}
		end(sp, e.Outcome, e.ErrorType, e.Time)
	case NameToolStarted:
		s.replace(s.tools, e.ToolStartedID, s.start(s.ops[e.OperationID], SpanTool, e.Time, toolAttrs(e)...), e.Time)
	case NameToolCompleted:
		sp := s.take(s.tools, e.ToolStartedID, s.ops[e.OperationID], SpanTool, e, toolAttrs(e))
		end(sp, e.Outcome, e.ErrorType, e.Time)
	}
}

// start begins a span under parent (a new root when parent is nil).
func (s *spanState) start(parent *openSpan, name string, at time.Time, attrs ...attribute.KeyValue) *openSpan {
	ctx := context.Background()
	opts := []trace.SpanStartOption{trace.WithTimestamp(at), trace.WithAttributes(attrs...)}
	if parent != nil {
		ctx = parent.ctx
	} else {
		opts = append(opts, trace.WithNewRoot())
	}
	ctx, span := s.tracer.Start(ctx, name, opts...)
	return &openSpan{ctx: ctx, span: span}
}

// replace records sp under key, ending a span it displaces (a start
// without a completion) as effect_unknown.
func (s *spanState) replace(m map[string]*openSpan, key string, sp *openSpan, at time.Time) {
	if old := m[key]; old != nil {
		end(old, EffectUnknown, "", at)
	}
	m[key] = sp
}

// take removes and returns the span open under key. A completion whose
// start was never seen still gets a span, backdated by its duration.
func (s *spanState) take(m map[string]*openSpan, key string, parent *openSpan, name string, e Event, attrs []attribute.KeyValue) *openSpan {
	if sp := m[key]; sp != nil {
		delete(m, key)
		return sp
	}
	return s.start(parent, name, e.Time.Add(-duration(e)), attrs...)
}

// event adds a span event to the operation span of e, if it is open.
func (s *spanState) event(e Event, attrs ...attribute.KeyValue) {
	op := s.ops[e.OperationID]
	if op == nil {
		return
	}
	attrs = append(attrs, attribute.Bool("tiny.recovery", e.Recovery))
	op.span.AddEvent(string(e.Name), trace.WithTimestamp(e.Time), trace.WithAttributes(attrs...))
}

// endAll ends every open span with outcome effect_unknown, children first.
func (s *spanState) endAll(at time.Time) {
	for _, m := range []map[string]*openSpan{s.tools, s.models, s.mcp, s.ops} {
		for k, sp := range m {
			end(sp, EffectUnknown, "", at)
			delete(m, k)
		}
	}
	if s.startup != nil {
		end(s.startup, EffectUnknown, "", at)
		s.startup = nil
	}
}

// end settles sp: tiny.outcome always; status OK when succeeded, Unset
// when cancelled, Error with a bounded error.type otherwise.
func end(sp *openSpan, outcome Outcome, errorType string, at time.Time) {
	sp.span.SetAttributes(attribute.String("tiny.outcome", string(outcome)))
	switch outcome {
	case Succeeded:
		sp.span.SetStatus(codes.Ok, "")
	case Cancelled:
	default:
		sp.span.SetAttributes(attribute.String("error.type", boundedErrorType(errorType, outcome)))
		sp.span.SetStatus(codes.Error, "")
	}
	sp.span.End(trace.WithTimestamp(at))
}

func duration(e Event) time.Duration { return time.Duration(e.DurationMs) * time.Millisecond }

// boundedErrorType keeps error.type a short code: anything that is not a
// lowercase identifier of at most 64 bytes (free text, a message, a path)
// becomes "_OTHER", so no message text can leak through it.
func boundedErrorType(errorType string, outcome Outcome) string {
	if errorType == "" {
		if outcome == EffectUnknown {
			return string(EffectUnknown)
		}
		return "_OTHER"
	}
	if len(errorType) > 64 {
		return "_OTHER"
	}
	for _, c := range []byte(errorType) {
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_' || c == '.' || c == '-') {
			return "_OTHER"
		}
	}
	return errorType
}

func sessionAttrs(id string) []attribute.KeyValue {
	return []attribute.KeyValue{
		attribute.String("session.id", id),
		attribute.String("gen_ai.conversation.id", id),
		attribute.String("tiny.session.id", id),
	}
}

// opAttrs are the ids every operation-scoped span carries.
func opAttrs(e Event) []attribute.KeyValue {
	attrs := sessionAttrs(e.SessionID)
	attrs = append(attrs, attribute.String("tiny.operation.id", e.OperationID))
	if e.OperationKind != "" {
		attrs = append(attrs, attribute.String("tiny.operation.kind", string(e.OperationKind)))
	}
	return append(attrs, attribute.Bool("tiny.recovery", e.Recovery))
}

func opSpanAttrs(e Event) []attribute.KeyValue {
	return append(opAttrs(e),
		attribute.String("openinference.span.kind", "AGENT"),
		attribute.String("gen_ai.operation.name", "invoke_agent"))
}

func (s *spanState) modelAttrs(e Event) []attribute.KeyValue {
	attrs := append(opAttrs(e),
		attribute.String("openinference.span.kind", "LLM"),
		attribute.String("gen_ai.operation.name", "chat"),
		attribute.String("tiny.step.id", e.StepID),
		attribute.String("tiny.attempt.id", e.AttemptID))
	if e.Attempt > 0 {
		attrs = append(attrs, attribute.Int("tiny.attempt.number", e.Attempt))
	}
	model := e.Model
	if model == "" {
		model = s.model
	}
	if model != "" {
		attrs = append(attrs,
			attribute.String("gen_ai.request.model", model),
			attribute.String("llm.model_name", model))
	}
	return attrs
}

func toolAttrs(e Event) []attribute.KeyValue {
	return append(opAttrs(e),
		attribute.String("openinference.span.kind", "TOOL"),
		attribute.String("gen_ai.operation.name", "execute_tool"),
		attribute.String("tiny.step.id", e.StepID),
		attribute.String("tiny.attempt.id", e.AttemptID),
		attribute.String("tiny.parent_attempt.id", e.ParentAttemptID),
		attribute.String("tiny.tool.started.id", e.ToolStartedID),
		attribute.String("gen_ai.tool.name", e.Tool),
		attribute.String("gen_ai.tool.call.id", e.ToolCallID),
		attribute.String("tool.name", e.Tool))
}

func mcpAttrs(e Event) []attribute.KeyValue {
	return []attribute.KeyValue{attribute.String("tiny.mcp.server", e.Server)}
}

// usageAttrs follows events.md: gen_ai input tokens include cached ones;
// tiny.usage.input_tokens is the uncached input alone.
func usageAttrs(u Usage) []attribute.KeyValue {
	prompt := u.PromptTokens()
	return []attribute.KeyValue{
		attribute.Int64("gen_ai.usage.input_tokens", prompt),
		attribute.Int64("gen_ai.usage.output_tokens", u.Output),
		attribute.Int64("gen_ai.usage.cache_read.input_tokens", u.CacheRead),
		attribute.Int64("gen_ai.usage.cache_creation.input_tokens", u.CacheWrite),
		attribute.Int64("llm.token_count.prompt", prompt),
		attribute.Int64("llm.token_count.completion", u.Output),
		attribute.Int64("llm.token_count.total", prompt+u.Output),
		attribute.Int64("tiny.usage.input_tokens", u.Input),
		attribute.Int64("tiny.usage.cache_read_tokens", u.CacheRead),
		attribute.Int64("tiny.usage.cache_write_tokens", u.CacheWrite),
	}
}
