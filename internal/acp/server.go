package acp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/approval"
	"github.com/tiny-agent/tiny-go/internal/commands"
	"github.com/tiny-agent/tiny-go/internal/session"
	"github.com/tiny-agent/tiny-go/internal/store"
)

// ProtocolVersion is the ACP major version tiny-go speaks (the stable v1
// schema of acp-go-sdk v0.13.0).
const ProtocolVersion = acpsdk.ProtocolVersionNumber

// announceDelay lets the response to session/new go out before the
// session's first update (its slash commands).
const announceDelay = 50 * time.Millisecond

// Options configure Serve.
type Options struct {
	In  io.Reader // the client's requests
	Out io.Writer // protocol only
	Log io.Writer // diagnostics (stderr)

	Backend Backend
	// Mode is the approval mode new sessions start in (--approval).
	Mode approval.Mode
	// Version is tiny-go's, reported in agentInfo.
	Version string
	// ShutdownGrace bounds how long an aborted operation may take to end
	// after the client went away (default 30s).
	ShutdownGrace time.Duration
}

// Serve speaks ACP on opt.In and opt.Out until the client disconnects or
// ctx ends (a signal). Either way every running prompt is aborted the
// durable way (abortRequested, then reconciliation, exactly the Esc path)
// and every session closed before Serve returns.
func Serve(ctx context.Context, opt Options) error {
	if opt.ShutdownGrace == 0 {
		opt.ShutdownGrace = 30 * time.Second
	}
	if opt.Mode == "" {
		opt.Mode = approval.Ask
	}
	logger := slog.New(slog.NewTextHandler(opt.Log, nil))
	out := &lockedWriter{w: opt.Out}
	pr, pw := io.Pipe()
	// runCtx outlives the requests: an operation ends by a durable abort,
	// never by a cancelled context, unless the grace runs out.
	runCtx, hardStop := context.WithCancel(context.WithoutCancel(ctx))
	defer hardStop()
	srv := &server{opt: opt, log: logger, runCtx: runCtx, sessions: map[string]*sess{}}
	conn := acpsdk.NewAgentSideConnection(srv, out, pr)
	conn.SetLogger(logger)
	srv.conn = conn
	srv.calls = &clientCalls{out: out}

	framed := make(chan error, 1)
	go func() { framed <- frame(opt.In, pw, out, srv.calls, logger) }()

	select {
	case <-conn.Done():
		logger.Info("client disconnected")
	case <-ctx.Done():
		logger.Info("stopping", "cause", context.Cause(ctx))
	}
	srv.shutdown(hardStop)
	_ = pw.CloseWithError(io.EOF)
	return nil
}

// lockedWriter serializes whole messages: the SDK writes each message with
// one Write, and frame's error replies go through the same lock.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// server implements the agent side of ACP.
type server struct {
	opt    Options
	log    *slog.Logger
	conn   *acpsdk.AgentSideConnection
	calls  *clientCalls // requests the SDK cannot say (calls.go)
	runCtx context.Context

	mu          sync.Mutex
	initialized bool
	client      acpsdk.ClientCapabilities
	sessions    map[string]*sess
	closing     bool
	prompts     sync.WaitGroup
}

var _ acpsdk.Agent = (*server)(nil)
var _ acpsdk.AgentLoader = (*server)(nil)

// Errors the client sees.
func errNotInitialized() error {
	return acpsdk.NewInvalidRequest(map[string]any{"error": "call initialize first"})
}

func errUnknownSession(id acpsdk.SessionId) error {
	return acpsdk.NewInvalidParams(map[string]any{"error": fmt.Sprintf("unknown session %q: create it with session/new or open it with session/load", string(id))})
}

func (srv *server) ready() error {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if !srv.initialized {
		return errNotInitialized()
	}
	if srv.closing {
		return acpsdk.NewInternalError(map[string]any{"error": "tiny-go is shutting down"})
	}
	return nil
}

func (srv *server) lookup(id acpsdk.SessionId) (*sess, error) {
	if err := srv.ready(); err != nil {
		return nil, err
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	s, ok := srv.sessions[string(id)]
	if !ok {
		return nil, errUnknownSession(id)
	}
	return s, nil
}

// Initialize negotiates the protocol version: tiny-go speaks v1 and
// answers v1 to any client (a client that cannot speak it disconnects).
func (srv *server) Initialize(_ context.Context, p acpsdk.InitializeRequest) (acpsdk.InitializeResponse, error) {
	srv.mu.Lock()
	srv.initialized = true
	srv.client = p.ClientCapabilities
	srv.mu.Unlock()
	resp := acpsdk.InitializeResponse{
		ProtocolVersion: ProtocolVersion,
		AgentCapabilities: acpsdk.AgentCapabilities{
			LoadSession: true,
			PromptCapabilities: acpsdk.PromptCapabilities{
				EmbeddedContext: true,
			},
			McpCapabilities:     acpsdk.McpCapabilities{Http: true},
			SessionCapabilities: acpsdk.SessionCapabilities{List: &acpsdk.SessionListCapabilities{}},
		},
		AgentInfo:   &acpsdk.Implementation{Name: "tiny-go", Title: acpsdk.Ptr("tiny-go"), Version: srv.opt.Version},
		AuthMethods: []acpsdk.AuthMethod{},
	}
	if v, msg := srv.opt.Backend.MissingKey(); v != "" {
		resp.AuthMethods = append(resp.AuthMethods, acpsdk.AuthMethod{Agent: &acpsdk.AuthMethodAgent{
			Id:          v,
			Name:        "Set " + v,
			Description: acpsdk.Ptr(msg + " Then restart the agent."),
		}})
	}
	return resp, nil
}

// Authenticate succeeds once the key the method names is set: tiny-go
// reads keys from its environment only, so the editor must start it with
// the variable set.
func (srv *server) Authenticate(_ context.Context, p acpsdk.AuthenticateRequest) (acpsdk.AuthenticateResponse, error) {
	if err := srv.ready(); err != nil {
		return acpsdk.AuthenticateResponse{}, err
	}
	if v, msg := srv.opt.Backend.MissingKey(); v != "" {
		return acpsdk.AuthenticateResponse{}, acpsdk.NewAuthRequired(map[string]any{"error": msg, "envVar": v, "methodId": p.MethodId})
	}
	return acpsdk.AuthenticateResponse{}, nil
}

func (srv *server) authorized() error {
	if v, msg := srv.opt.Backend.MissingKey(); v != "" {
		return acpsdk.NewAuthRequired(map[string]any{"error": msg, "envVar": v})
	}
	return nil
}

func (srv *server) NewSession(ctx context.Context, p acpsdk.NewSessionRequest) (acpsdk.NewSessionResponse, error) {
	s, err := srv.open(ctx, p.Cwd, "", p.McpServers)
	if err != nil {
		return acpsdk.NewSessionResponse{}, err
	}
	s.live.Store(true)
	// The client learns the session id from the response: updates for
	// it must not overtake it, and the SDK writes the response only after
	// this returns.
	time.AfterFunc(announceDelay, s.announce)
	return acpsdk.NewSessionResponse{SessionId: acpsdk.SessionId(s.id), Modes: s.modeState()}, nil
}

// LoadSession opens a durable session: an operation a dead process left
// open is recovered first, exactly as `tiny-go --session` does, and then
// the whole visible history is replayed to the client.
func (srv *server) LoadSession(ctx context.Context, p acpsdk.LoadSessionRequest) (acpsdk.LoadSessionResponse, error) {
	if p.SessionId == "" {
		return acpsdk.LoadSessionResponse{}, acpsdk.NewInvalidParams(map[string]any{"error": "sessionId is required"})
	}
	srv.mu.Lock()
	_, open := srv.sessions[string(p.SessionId)]
	srv.mu.Unlock()
	if open {
		return acpsdk.LoadSessionResponse{}, acpsdk.NewInvalidRequest(map[string]any{"error": fmt.Sprintf("session %s is already open in this connection", p.SessionId)})
	}
	s, err := srv.open(ctx, p.Cwd, string(p.SessionId), p.McpServers)
	if err != nil {
		return acpsdk.LoadSessionResponse{}, err
	}
	if err := s.recover(); err != nil {
		srv.drop(s)
		return acpsdk.LoadSessionResponse{}, err
	}
	s.replay()
	s.live.Store(true)
	s.announce()
	s.flush()
	return acpsdk.LoadSessionResponse{Modes: s.modeState()}, nil
}

// open builds a session through the backend and registers it.
func (srv *server) open(ctx context.Context, cwd, id string, servers []acpsdk.McpServer) (*sess, error) {
	if err := srv.ready(); err != nil {
		return nil, err
	}
	if err := srv.authorized(); err != nil {
		return nil, err
	}
	if !filepath.IsAbs(cwd) {
		return nil, acpsdk.NewInvalidParams(map[string]any{"error": fmt.Sprintf("cwd must be an absolute path, not %q", cwd)})
	}
	s := newSess(srv)
	backend, err := srv.opt.Backend.Open(ctx, OpenRequest{Cwd: cwd, SessionID: id, MCPNames: mcpNames(servers), Host: s.host()})
	if err != nil {
		s.stop()
		return nil, acpsdk.NewInvalidParams(map[string]any{"error": err.Error()})
	}
	s.attach(backend)
	// The same custom commands as the terminal offers in that directory;
	// a file that cannot be used is one line on the log.
	home, _ := os.UserHomeDir()
	var problems []string
	s.custom, problems = commands.Load(commands.Dirs(cwd, home)...)
	for _, p := range problems {
		fmt.Fprintf(srv.opt.Log, "tiny-go acp: %s\n", p)
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if srv.closing {
		s.close()
		return nil, acpsdk.NewInternalError(map[string]any{"error": "tiny-go is shutting down"})
	}
	srv.sessions[s.id] = s
	return s, nil
}

func (srv *server) drop(s *sess) {
	srv.mu.Lock()
	delete(srv.sessions, s.id)
	srv.mu.Unlock()
	s.close()
}

func (srv *server) SetSessionMode(_ context.Context, p acpsdk.SetSessionModeRequest) (acpsdk.SetSessionModeResponse, error) {
	s, err := srv.lookup(p.SessionId)
	if err != nil {
		return acpsdk.SetSessionModeResponse{}, err
	}
	m, err := approval.ParseMode(string(p.ModeId))
	if err != nil {
		return acpsdk.SetSessionModeResponse{}, acpsdk.NewInvalidParams(map[string]any{"error": "modeId must be " + approval.ModeChoice()})
	}
	s.setMode(m)
	return acpsdk.SetSessionModeResponse{}, nil
}

// Cancel is the Esc path: a durable abort of the running operation; the
// prompt request then answers "cancelled".
func (srv *server) Cancel(_ context.Context, p acpsdk.CancelNotification) error {
	s, err := srv.lookup(p.SessionId)
	if err != nil {
		srv.log.Warn("session/cancel", "err", err)
		return nil
	}
	s.cancel()
	return nil
}

func (srv *server) Prompt(ctx context.Context, p acpsdk.PromptRequest) (acpsdk.PromptResponse, error) {
	s, err := srv.lookup(p.SessionId)
	if err != nil {
		return acpsdk.PromptResponse{}, err
	}
	text, err := promptText(p.Prompt)
	if err != nil {
		return acpsdk.PromptResponse{}, acpsdk.NewInvalidParams(map[string]any{"error": err.Error()})
	}
	srv.mu.Lock()
	if srv.closing {
		srv.mu.Unlock()
		return acpsdk.PromptResponse{}, acpsdk.NewInternalError(map[string]any{"error": "tiny-go is shutting down"})
	}
	srv.prompts.Add(1)
	srv.mu.Unlock()
	defer srv.prompts.Done()
	token := s.begin()
	if token == nil {
		return acpsdk.PromptResponse{}, acpsdk.NewInvalidRequest(map[string]any{"error": "a prompt is already running in this session; wait for it or send session/cancel"})
	}
	defer s.end()

	// The request's context ends when the client cancels the request or
	// disconnects: both abort the operation durably. It also ends after
	// this returns, so the watcher names the prompt it watches.
	watched := make(chan struct{})
	defer close(watched)
	go func() {
		select {
		case <-ctx.Done():
			s.cancelIf(token)
		case <-watched:
		}
	}()
	res, err := s.run(srv.runCtx, text)
	s.flush()
	if err != nil {
		return acpsdk.PromptResponse{}, err
	}
	return acpsdk.PromptResponse{StopReason: stopReason(res)}, nil
}

// stopReason maps how an operation ended onto ACP's stop reasons.
func stopReason(res agent.Result) acpsdk.StopReason {
	switch {
	case res.Outcome == session.OutcomeAborted:
		return acpsdk.StopReasonCancelled
	case res.Completion == session.CompletionTruncated, cutOff(res):
		return acpsdk.StopReasonMaxTokens
	case declined(res):
		return acpsdk.StopReasonRefusal
	}
	return acpsdk.StopReasonEndTurn
}

// declined reports a run that failed because the model declined to answer
// (Anthropic's refusal, OpenAI's content_filter): for the editor that is
// the refusal stop, not an error.
func declined(res agent.Result) bool {
	return res.Outcome == session.OutcomeFailed && res.Error != nil &&
		res.Error.Code == session.CodeModelError && strings.HasPrefix(res.Error.Message, agent.DeclinedPrefix)
}

// cutOff reports a run that failed because its answer hit the model's
// token limit (runtime.md: a text reply cut off is not an answer): for
// the editor that is the max_tokens stop, not an error.
func cutOff(res agent.Result) bool {
	return res.Outcome == session.OutcomeFailed && res.Error != nil &&
		res.Error.Code == session.CodeModelError && res.Error.Message == "the reply was cut off by the model token limit"
}

// runError is the JSON-RPC error of an operation that did not complete.
func runError(id string, res agent.Result, err error) error {
	switch {
	case err == nil && (cutOff(res) || declined(res)):
		return nil
	case errors.Is(err, agent.ErrBusy):
		return acpsdk.NewInvalidRequest(map[string]any{"error": "a prompt is already running in this session"})
	case errors.Is(err, agent.ErrNothingToCompact):
		return nil
	case errors.Is(err, store.ErrTampered), errors.Is(err, session.ErrMappingFault):
		// The file changed under tiny-go: its line says what to do, and
		// loading the session again is not it.
		return acpsdk.NewInternalError(map[string]any{"error": err.Error()})
	case err != nil:
		return acpsdk.NewInternalError(map[string]any{"error": fmt.Sprintf("%v; the session is saved: load session %s to resume", err, id)})
	case res.Blocked != "":
		return acpsdk.NewInternalError(map[string]any{"error": fmt.Sprintf("session %s is blocked (%s): restore the configuration it was started with and load it again, or run: tiny-go session abort %s", id, res.Blocked, id)})
	case res.Outcome == session.OutcomeFailed:
		msg := "the run failed"
		if res.Error != nil {
			msg = "the run failed: " + res.Error.Message
		}
		return acpsdk.NewInternalError(map[string]any{"error": msg + "; the session is saved, send another prompt to go on"})
	}
	return nil
}

// shutdown aborts every running operation durably, waits for them to end
// (at most the grace, then stops them hard, leaving them open for the next
// load to recover), and closes every session.
func (srv *server) shutdown(hardStop context.CancelFunc) {
	srv.mu.Lock()
	srv.closing = true
	open := make([]*sess, 0, len(srv.sessions))
	for _, s := range srv.sessions {
		open = append(open, s)
	}
	srv.mu.Unlock()
	for _, s := range open {
		s.cancel()
	}
	done := make(chan struct{})
	go func() {
		srv.prompts.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(srv.opt.ShutdownGrace):
		srv.log.Warn("an aborted operation did not end in time; stopping it (load the session to recover)")
		hardStop()
		<-done
	}
	for _, s := range open {
		s.close()
	}
}

// CloseSession aborts the session's running operation durably and closes it.
func (srv *server) CloseSession(_ context.Context, p acpsdk.CloseSessionRequest) (acpsdk.CloseSessionResponse, error) {
	s, err := srv.lookup(p.SessionId)
	if err != nil {
		return acpsdk.CloseSessionResponse{}, err
	}
	s.cancel()
	s.waitIdle()
	srv.drop(s)
	return acpsdk.CloseSessionResponse{}, nil
}

// Methods of capabilities tiny-go does not announce.

func (srv *server) ResumeSession(context.Context, acpsdk.ResumeSessionRequest) (acpsdk.ResumeSessionResponse, error) {
	return acpsdk.ResumeSessionResponse{}, acpsdk.NewMethodNotFound(acpsdk.AgentMethodSessionResume)
}

func (srv *server) SetSessionConfigOption(context.Context, acpsdk.SetSessionConfigOptionRequest) (acpsdk.SetSessionConfigOptionResponse, error) {
	return acpsdk.SetSessionConfigOptionResponse{}, acpsdk.NewMethodNotFound(acpsdk.AgentMethodSessionSetConfigOption)
}
