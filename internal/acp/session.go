package acp

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/approval"
	"github.com/tiny-agent/tiny-go/internal/commands"
	"github.com/tiny-agent/tiny-go/internal/planmode"
)

// updateQueue bounds the session updates waiting for a slow client. When
// it is full the agent waits (back-pressure) until the client reads or the
// operation is cancelled; from a cancel on, updates that do not fit are
// dropped, so an abort never waits for a client that does not read.
const updateQueue = 256

// queued is one session update, or (flushed set) a marker that closes
// flushed once everything before it is written.
type queued struct {
	update  acpsdk.SessionUpdate
	flushed chan struct{}
}

// sess is one session of the connection.
type sess struct {
	srv *server
	id  string
	s   Session

	// live is set once updates go to the client: not while a load
	// recovers (the replay then shows what recovery did).
	live atomic.Bool

	updates chan queued
	done    chan struct{} // closed by stop: the sender ends

	mu       sync.Mutex
	idle     *sync.Cond // signalled when running ends
	running  bool
	mode     approval.Mode
	modeSw   *approval.Switch // mode, for the session's tools
	rejected map[string]bool  // "reject always" answers of this connection
	// cancelled is closed when the running prompt is cancelled; from then
	// on updates never block.
	cancelled chan struct{}
	// abortOwed is set when a cancel found no operation yet: the run
	// being started is aborted as soon as it is.
	abortOwed bool
	// custom are the custom slash commands of the session's directory
	// and the user's (internal/commands), read when it opens.
	custom []commands.Command
	// announced are the tool calls already shown (asked about before
	// their start).
	announced map[string]bool
	// calls are the tool calls under way, by id: their display names
	// (an MCP server's form is tied to its call, elicit.go).
	calls map[string]string
	// startedCalls are the tool call ids of the calls under way, by their
	// toolStarted id (a review's question names its call, permission.go).
	startedCalls map[string]string
	closed       bool // stop ran
}

func newSess(srv *server) *sess {
	s := &sess{
		srv:          srv,
		updates:      make(chan queued, updateQueue),
		done:         make(chan struct{}),
		mode:         srv.opt.Mode,
		modeSw:       approval.NewSwitch(srv.opt.Mode),
		rejected:     map[string]bool{},
		cancelled:    make(chan struct{}),
		announced:    map[string]bool{},
		calls:        map[string]string{},
		startedCalls: map[string]string{},
	}
	s.idle = sync.NewCond(&s.mu)
	go s.send()
	return s
}

func (s *sess) attach(b Session) {
	s.s = b
	s.id = b.ID()
}

// host is how the agent of this session reaches the client.
func (s *sess) host() Host {
	h := Host{
		Events:  s.event,
		Ask:     s.ask,
		Approve: withRequest,
		Mode:    s.modeSw,
		Elicit:  s.elicit,
	}
	if fs := s.srv.clientFS(); fs.read || fs.write {
		h.Editor = &clientEditor{s: s, fs: fs}
	}
	return h
}

// send writes queued updates in order until the session stops.
func (s *sess) send() {
	for {
		select {
		case q := <-s.updates:
			if q.flushed != nil {
				close(q.flushed)
				continue
			}
			err := s.srv.conn.SessionUpdate(context.Background(), acpsdk.SessionNotification{SessionId: acpsdk.SessionId(s.id), Update: q.update})
			if err != nil {
				s.srv.log.Debug("session/update", "err", err)
			}
		case <-s.done:
			return
		}
	}
}

// push queues an update: it waits while the queue is full, unless the
// prompt was cancelled or the session stopped.
func (s *sess) push(q queued) bool {
	s.mu.Lock()
	cancelled := s.cancelled
	s.mu.Unlock()
	select {
	case s.updates <- q:
		return true
	default:
	}
	select {
	case s.updates <- q:
		return true
	case <-cancelled:
	case <-s.done:
	}
	s.srv.log.Warn("the client is not reading; a session update was dropped", "session", s.id)
	return false
}

func (s *sess) update(u acpsdk.SessionUpdate) { s.push(queued{update: u}) }

// flush waits until every queued update is written, unless the client
// stops reading after a cancel.
func (s *sess) flush() {
	q := queued{flushed: make(chan struct{})}
	if !s.push(q) {
		return
	}
	s.mu.Lock()
	cancelled := s.cancelled
	s.mu.Unlock()
	select {
	case <-q.flushed:
	case <-cancelled:
	case <-s.done:
	}
}

// stop ends the sender.
func (s *sess) stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.closed = true
		close(s.done)
	}
}

func (s *sess) close() {
	s.stop()
	if s.s != nil {
		s.s.Close()
	}
}

// begin marks a prompt running and returns its token (for cancelIf);
// nil when one already runs.
func (s *sess) begin() chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running {
		return nil
	}
	s.running = true
	s.cancelled = make(chan struct{})
	s.abortOwed = false
	return s.cancelled
}

func (s *sess) end() {
	s.mu.Lock()
	s.running = false
	s.idle.Broadcast()
	s.mu.Unlock()
}

// waitIdle waits until no prompt runs.
func (s *sess) waitIdle() {
	s.mu.Lock()
	for s.running {
		s.idle.Wait()
	}
	s.mu.Unlock()
}

// cancel aborts the running operation durably (abortRequested committed,
// the active phase signalled); a no-op when nothing runs.
func (s *sess) cancel() { s.cancelIf(nil) }

// cancelIf is cancel of the prompt whose token begin returned (any prompt
// for nil): a late watcher of an earlier prompt must not cancel the next.
func (s *sess) cancelIf(token chan struct{}) {
	s.mu.Lock()
	if !s.running || (token != nil && token != s.cancelled) {
		s.mu.Unlock()
		return
	}
	select {
	case <-s.cancelled:
	default:
		close(s.cancelled)
	}
	s.mu.Unlock()
	ok, err := s.s.Agent().Abort(context.Background())
	if err != nil {
		s.srv.log.Error("abort", "session", s.id, "err", err)
	}
	if !ok {
		// Before the operation started: abort it once it has.
		s.mu.Lock()
		s.abortOwed = true
		s.mu.Unlock()
	}
}

// run is one prompt: an open operation is recovered first, then the
// prompt runs. Slash commands are handled here.
func (s *sess) run(ctx context.Context, text string) (agent.Result, error) {
	a := s.s.Agent()
	if a.Pending() {
		res, err := a.Resume(ctx)
		if err != nil || res.Blocked != "" {
			return res, runError(s.id, res, err)
		}
	}
	if cmd, ok := slashCommand(text); ok {
		return s.command(ctx, cmd, text)
	}
	if c, args, ok := customCommand(s.custom, text); ok {
		text = c.Expand(args)
	}
	res, err := a.Run(ctx, planmode.Remind(text, s.modeSw.Planning()))
	if rerr := runError(s.id, res, err); rerr != nil {
		return res, rerr
	}
	return res, nil
}

// recover runs the open operation a dead process left, as --session does.
// Its progress is not streamed: the replay that follows shows the result.
func (s *sess) recover() error {
	a := s.s.Agent()
	if !a.Pending() {
		return nil
	}
	if s.begin() == nil {
		return acpsdk.NewInvalidRequest(map[string]any{"error": "the session is busy"})
	}
	defer s.end()
	s.srv.mu.Lock()
	s.srv.prompts.Add(1)
	s.srv.mu.Unlock()
	defer s.srv.prompts.Done()
	res, err := a.Resume(s.srv.runCtx)
	if rerr := runError(s.id, res, err); rerr != nil {
		return rerr
	}
	s.srv.log.Info("recovered the open operation", "session", s.id, "kind", res.Kind, "outcome", res.Outcome)
	return nil
}

// event turns agent events into session updates.
func (s *sess) event(ev agent.Event) {
	if os, ok := ev.(agent.OperationStarted); ok && !os.Recovery {
		s.mu.Lock()
		owed := s.abortOwed
		s.abortOwed = false
		s.mu.Unlock()
		if owed {
			go func() { _, _ = s.s.Agent().Abort(context.Background()) }()
		}
	}
	if !s.live.Load() {
		return
	}
	switch e := ev.(type) {
	case agent.ModelDelta:
		s.update(acpsdk.UpdateAgentMessageText(e.Text))
	case agent.ModelReasoningDelta:
		s.update(acpsdk.UpdateAgentThoughtText(e.Text))
	case agent.ToolAdmitted:
		c := describeCall(e.Tool.Tool, e.Tool.Display, e.Tool.Arguments, s.workDir())
		s.mu.Lock()
		shown := s.announced[e.Tool.ToolCallID]
		s.mu.Unlock()
		if shown {
			s.update(c.update(e.Tool.ToolCallID, acpsdk.ToolCallStatusPending))
		} else {
			s.update(c.start(e.Tool.ToolCallID, acpsdk.ToolCallStatusPending))
		}
	case agent.ToolStarted:
		s.mu.Lock()
		s.calls[e.Tool.ToolCallID] = e.Tool.Display
		s.startedCalls[e.Tool.ToolStartedID] = e.Tool.ToolCallID
		s.mu.Unlock()
		s.update(acpsdk.UpdateToolCall(acpsdk.ToolCallId(e.Tool.ToolCallID), acpsdk.WithUpdateStatus(acpsdk.ToolCallStatusInProgress)))
	case agent.ToolCompleted:
		s.mu.Lock()
		delete(s.announced, e.Tool.ToolCallID)
		delete(s.calls, e.Tool.ToolCallID)
		delete(s.startedCalls, e.Tool.ToolStartedID)
		s.mu.Unlock()
		status := acpsdk.ToolCallStatusCompleted
		if e.Outcome.Outcome != "succeeded" {
			status = acpsdk.ToolCallStatusFailed
		}
		opts := []acpsdk.ToolCallUpdateOpt{acpsdk.WithUpdateStatus(status)}
		if e.Outcome.Content != "" {
			opts = append(opts, acpsdk.WithUpdateContent([]acpsdk.ToolCallContent{acpsdk.ToolContent(acpsdk.TextBlock(clip(e.Outcome.Content)))}))
		}
		s.update(acpsdk.UpdateToolCall(acpsdk.ToolCallId(e.Tool.ToolCallID), opts...))
		if l, ok := planFromCall(e); ok {
			s.plan(l)
		}
	}
}

func (s *sess) workDir() string { return s.s.WorkDir() }

// modeState offers every mode of --approval (approval.Modes, the one
// list), named as Claude Code's editors show them.
func (s *sess) modeState() *acpsdk.SessionModeState {
	s.mu.Lock()
	defer s.mu.Unlock()
	modes := make([]acpsdk.SessionMode, 0, len(approval.Modes))
	for _, m := range approval.Modes {
		modes = append(modes, acpsdk.SessionMode{Id: acpsdk.SessionModeId(m.Mode), Name: modeNames[m.Mode], Description: acpsdk.Ptr(m.Description)})
	}
	return &acpsdk.SessionModeState{CurrentModeId: acpsdk.SessionModeId(s.mode), AvailableModes: modes}
}

// modeNames are the modes' names in an editor's mode menu.
var modeNames = map[approval.Mode]string{
	approval.Ask: "Ask", approval.Edits: "Accept edits", approval.Auto: "Auto",
	approval.Plan: "Plan", approval.Review: "Review",
}

func (s *sess) setMode(m approval.Mode) {
	s.mu.Lock()
	s.mode = m
	s.modeSw.Set(m)
	s.mu.Unlock()
	s.update(acpsdk.SessionUpdate{CurrentModeUpdate: &acpsdk.SessionCurrentModeUpdate{CurrentModeId: acpsdk.SessionModeId(m), SessionUpdate: "current_mode_update"}})
}

// announce tells the client the session's slash commands.
func (s *sess) announce() {
	cmds := make([]acpsdk.AvailableCommand, 0, len(builtinCommands))
	for _, c := range builtinCommands {
		ac := acpsdk.AvailableCommand{Name: c.name, Description: c.description}
		if c.hint != "" {
			ac.Input = &acpsdk.AvailableCommandInput{Unstructured: &acpsdk.UnstructuredCommandInput{Hint: c.hint}}
		}
		cmds = append(cmds, ac)
	}
	for _, c := range s.custom {
		ac := acpsdk.AvailableCommand{Name: c.Name, Description: c.Description}
		if c.ArgHint != "" {
			ac.Input = &acpsdk.AvailableCommandInput{Unstructured: &acpsdk.UnstructuredCommandInput{Hint: c.ArgHint}}
		}
		cmds = append(cmds, ac)
	}
	s.update(acpsdk.SessionUpdate{AvailableCommandsUpdate: &acpsdk.SessionAvailableCommandsUpdate{AvailableCommands: cmds, SessionUpdate: "available_commands_update"}})
}

// clip bounds a tool result shown in the editor; the session keeps it whole.
func clip(s string) string {
	const max = 64 << 10
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8Start(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("\n… (%d more bytes)", len(s)-cut)
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// errAborted is returned to the agent when the client cancels a
// permission request: the operation is aborted the Esc way.
var errAborted = errors.New("the client cancelled the permission request")
