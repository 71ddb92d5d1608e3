package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/sourcegraph/jsonrpc2"
)

// client is one running language server: its process, the JSON-RPC
// connection over its stdio (Content-Length framing, sourcegraph/jsonrpc2),
// the documents tiny-go opened in it and the diagnostics it published.
type client struct {
	server Server
	root   string
	proc   *process
	conn   *jsonrpc2.Conn
	name   string // what the server calls itself, else its program

	mu      sync.Mutex
	docs    map[string]*document // by URI
	diags   map[string]*published
	seq     uint64        // publishes so far
	changed chan struct{} // closed and replaced on every publish
	dead    chan struct{} // closed when the connection ends
	err     error         // why it ended
	// unversioned: the server publishes without document versions, and
	// (typescript-language-server) nothing when they stay empty, so a
	// change is given as a close and an open, after which it publishes.
	unversioned bool
	// pull: the server gives a document's diagnostics when asked
	// (textDocument/diagnostic) rather than publishing them (pull.go).
	pull bool
}

// document is what the server has of one file: its version and text.
type document struct {
	version int
	text    string
	seq     uint64 // publishes before the last sync
}

// published is the last diagnostics of one document.
type published struct {
	seq     uint64
	version int // 0: the server gave none
	at      time.Time
	diags   []Diagnostic
}

// startClient starts the server's process and initializes it.
func startClient(ctx context.Context, s Server, root string, sp spawner) (*client, error) {
	proc, err := sp.spawn(s, root)
	if err != nil {
		return nil, err
	}
	c := newClient(s, root, proc.pipe())
	c.proc = proc
	go c.watch()
	if err := c.initialize(ctx); err != nil {
		c.kill()
		return nil, fmt.Errorf("%s did not start: %w", s.Program(), err)
	}
	return c, nil
}

// newClient speaks JSON-RPC with Content-Length framing (the base
// protocol of LSP) over rwc.
func newClient(s Server, root string, rwc io.ReadWriteCloser) *client {
	c := &client{server: s, root: root, name: s.Program(),
		docs: map[string]*document{}, diags: map[string]*published{},
		changed: make(chan struct{}), dead: make(chan struct{})}
	stream := jsonrpc2.NewBufferedStream(rwc, jsonrpc2.VSCodeObjectCodec{})
	c.conn = jsonrpc2.NewConn(context.Background(), stream, jsonrpc2.HandlerWithError(c.handle).SuppressErrClosed())
	return c
}

// watch notes the end of the connection (the process exited, crashed or
// closed its output).
func (c *client) watch() {
	select {
	case <-c.conn.DisconnectNotify():
		// Its output ends first when it dies: its exit status says more.
		select {
		case <-c.proc.done:
		case <-time.After(200 * time.Millisecond):
		}
	case <-c.proc.done:
		c.conn.Close()
	}
	c.mu.Lock()
	if c.err == nil {
		c.err = c.proc.exitError()
	}
	c.mu.Unlock()
	close(c.dead)
}

func (c *client) alive() bool {
	select {
	case <-c.dead:
		return false
	default:
		return true
	}
}

func (c *client) initialize(ctx context.Context) error {
	p := initializeParams{RootURI: fileURI(c.root), RootPath: c.root,
		WorkspaceFolders: []workspaceFolder{{URI: fileURI(c.root), Name: baseName(c.root)}},
		Capabilities:     json.RawMessage(clientCapabilities), InitializationOptions: c.server.InitializationOptions}
	p.ClientInfo.Name = "tiny-go"
	var res initializeResult
	if err := c.call(ctx, "initialize", p, &res); err != nil {
		return err
	}
	if res.ServerInfo != nil && res.ServerInfo.Name != "" {
		c.name = res.ServerInfo.Name
	}
	c.mu.Lock()
	c.pull = pullsOnly(res) // publish reads it on the connection's goroutine
	c.mu.Unlock()
	return c.conn.Notify(ctx, "initialized", struct{}{})
}

// call is a request that also ends when the server dies.
func (c *client) call(parent context.Context, method string, params, result any) error {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	go func() {
		select {
		case <-c.dead:
			cancel()
		case <-ctx.Done():
		}
	}()
	err := c.conn.Call(ctx, method, params, result)
	if err != nil && (!c.alive() || c.diesSoon(parent, err)) {
		return c.deadError()
	}
	return err
}

// diesSoon reports whether a call that failed on the connection itself
// (a write to a server that is going away: EPIPE) rather than by the
// server's answer is followed within a second by the server's end, so
// the caller names the exit, not the broken pipe.
func (c *client) diesSoon(parent context.Context, err error) bool {
	var answered *jsonrpc2.Error
	if parent.Err() != nil || errors.As(err, &answered) {
		return false
	}
	select {
	case <-c.dead:
		return true
	case <-time.After(time.Second):
		return false
	}
}

func (c *client) deadError() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return fmt.Errorf("%s exited: %w", c.server.Program(), c.err)
	}
	return fmt.Errorf("%s exited", c.server.Program())
}

// handle answers what a server asks of its client: settings (none: every
// item null), registrations and progress tokens (accepted), and keeps
// the diagnostics it publishes.
func (c *client) handle(_ context.Context, _ *jsonrpc2.Conn, req *jsonrpc2.Request) (any, error) {
	switch req.Method {
	case "textDocument/publishDiagnostics":
		var p publishDiagnosticsParams
		if req.Params != nil && json.Unmarshal(*req.Params, &p) == nil {
			c.publish(p)
		}
		return nil, nil
	case "workspace/configuration":
		var p struct {
			Items []json.RawMessage `json:"items"`
		}
		if req.Params != nil {
			_ = json.Unmarshal(*req.Params, &p)
		}
		return make([]any, len(p.Items)), nil
	case "workspace/workspaceFolders":
		return []workspaceFolder{{URI: fileURI(c.root), Name: baseName(c.root)}}, nil
	case "client/registerCapability", "client/unregisterCapability", "window/workDoneProgress/create",
		"window/showMessageRequest", "workspace/diagnostic/refresh", "workspace/semanticTokens/refresh",
		"workspace/inlayHint/refresh", "workspace/codeLens/refresh":
		return nil, nil
	}
	if req.Notif {
		return nil, nil // $/progress, window/logMessage and the like
	}
	return nil, &jsonrpc2.Error{Code: jsonrpc2.CodeMethodNotFound, Message: "tiny-go does not handle " + req.Method}
}

func (c *client) publish(p publishDiagnosticsParams) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	defer c.wake()
	pub := &published{seq: c.seq, at: time.Now(), diags: p.Diagnostics}
	if p.Version != nil {
		pub.version = *p.Version
	} else if !c.pull {
		c.unversioned = true // a pull server's own publishes are of other files
	}
	path, ok := uriPath(p.URI)
	if !ok {
		return
	}
	c.diags[path] = pub
}

// wake tells the waiters something was published; c.mu is held.
func (c *client) wake() {
	close(c.changed)
	c.changed = make(chan struct{})
}

// sync makes the server's copy of uri the given text: opened at version
// 1, else changed (whole text) and saved. It returns the version the
// server now has and the publish count before the change, so a wait can
// tell later publishes from earlier ones; same is true when the server
// already had that text.
func (c *client) sync(ctx context.Context, path, languageID, text string) (version int, seq uint64, same bool, err error) {
	uri := fileURI(path)
	c.mu.Lock()
	doc, open := c.docs[path]
	seq = c.seq
	if open && doc.text == text {
		c.mu.Unlock()
		return doc.version, seq, true, nil
	}
	if open && c.unversioned {
		c.mu.Unlock()
		return c.reopen(ctx, path, languageID, text)
	}
	if !open {
		doc = &document{}
		c.docs[path] = doc
	}
	doc.version++
	doc.text, doc.seq = text, seq
	version = doc.version
	c.mu.Unlock()
	if !open {
		err = c.conn.Notify(ctx, "textDocument/didOpen", didOpenParams{TextDocument: textDocumentItem{
			URI: uri, LanguageID: languageID, Version: version, Text: text}})
	} else {
		err = c.conn.Notify(ctx, "textDocument/didChange", didChangeParams{
			TextDocument:   versionedDocument{URI: uri, Version: version},
			ContentChanges: []contentChange{{Text: text}}})
		if err == nil {
			err = c.conn.Notify(ctx, "textDocument/didSave", didSaveParams{TextDocument: documentID{URI: uri}, Text: text})
		}
	}
	if err == nil && c.pull {
		go c.pullDiagnostics(path, version)
	}
	return version, seq, false, c.notifyError(ctx, err)
}

// clearWait bounds the wait for the empty publish a server sends when a
// document with diagnostics is closed.
const clearWait = 250 * time.Millisecond

// reopen gives an unversioned server a document's new text by closing
// and opening it: such a server publishes what it finds in a document
// just opened, even nothing, where it stays silent about a change that
// leaves the document without diagnostics. The empty publish of the
// close comes first and is not taken for the answer.
func (c *client) reopen(ctx context.Context, path, languageID, text string) (version int, seq uint64, same bool, err error) {
	uri := fileURI(path)
	c.mu.Lock()
	doc := c.docs[path]
	_, published := c.diags[path]
	seq, changed := c.seq, c.changed
	doc.version++
	doc.text = text
	version = doc.version
	c.mu.Unlock()
	if err := c.conn.Notify(ctx, "textDocument/didClose", didCloseParams{TextDocument: documentID{URI: uri}}); err != nil {
		return 0, 0, false, c.notifyError(ctx, err)
	}
	if published {
		// Publishes of the text before may still come first: the close's
		// is the first empty one after it.
		wait, cancel := context.WithTimeout(ctx, clearWait)
		for !c.cleared(path, seq) && wait.Err() == nil {
			select {
			case <-changed:
				c.mu.Lock()
				changed = c.changed
				c.mu.Unlock()
			case <-wait.Done():
			}
		}
		cancel()
	}
	c.mu.Lock()
	seq = c.seq
	doc.seq = seq
	c.mu.Unlock()
	err = c.conn.Notify(ctx, "textDocument/didOpen", didOpenParams{TextDocument: textDocumentItem{
		URI: uri, LanguageID: languageID, Version: version, Text: text}})
	return version, seq, false, c.notifyError(ctx, err)
}

// cleared reports whether path's diagnostics were published empty after
// publish number seq.
func (c *client) cleared(path string, seq uint64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	pub := c.diags[path]
	return pub != nil && pub.seq > seq && len(pub.diags) == 0
}

func (c *client) notifyError(ctx context.Context, err error) error {
	if err != nil && (!c.alive() || c.diesSoon(ctx, err)) {
		return c.deadError()
	}
	return err
}

// closeDocument forgets a document that no longer exists.
func (c *client) closeDocument(ctx context.Context, path string) {
	c.mu.Lock()
	_, open := c.docs[path]
	delete(c.docs, path)
	delete(c.diags, path)
	c.mu.Unlock()
	if open {
		_ = c.conn.Notify(ctx, "textDocument/didClose", didCloseParams{TextDocument: documentID{URI: fileURI(path)}})
	}
}

// settle is how long a document's diagnostics must stay unchanged to
// count as the server's answer: servers publish in bursts (syntax, then
// types), as opencode and Crush also assume.
const settle = 150 * time.Millisecond

// settleUnversioned is settle for a server without versions, whose
// answer to one change comes in several publishes (typescript-language-
// server: syntax, then semantic, then suggestion diagnostics);
// settleUnversionedEmpty after an empty one, which is often only the
// syntax pass: a wait that ends first (its bound) takes it as the answer.
const (
	settleUnversioned      = 400 * time.Millisecond
	settleUnversionedEmpty = time.Second
)

func (c *client) settle(pub *published) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case !c.unversioned:
		return settle
	case len(pub.diags) == 0:
		return settleUnversionedEmpty
	}
	return settleUnversioned
}

// errNoAnswer is a wait that ended before the server answered.
var errNoAnswer = errors.New("no answer yet")

// wait returns the diagnostics of path published after publish number
// seq for at least version, once they have been quiet for settle (or
// when ctx ends after they came). It ends with errNoAnswer when ctx ends
// before, or with the server's exit.
func (c *client) wait(ctx context.Context, path string, seq uint64, version int) ([]Diagnostic, error) {
	var quiet <-chan time.Time
	var last uint64
	var answer []Diagnostic
	for {
		c.mu.Lock()
		pub, changed := c.diags[path], c.changed
		c.mu.Unlock()
		if pub != nil && pub.seq > seq && (pub.version == 0 || pub.version >= version) {
			if pub.seq != last {
				last, answer = pub.seq, pub.diags
				quiet = time.After(c.settle(pub))
			}
		}
		select {
		case <-quiet:
			return answer, nil
		case <-changed:
		case <-c.dead:
			return nil, c.deadError()
		case <-ctx.Done():
			if last != 0 {
				return answer, nil // answered, if not quite quiet yet
			}
			return nil, errNoAnswer
		}
	}
}

// text is the server's copy of a document; open is false when it has
// none.
func (c *client) text(path string) (text string, open bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if doc := c.docs[path]; doc != nil {
		return doc.text, true
	}
	return "", false
}

// latest is the diagnostics of a document's current text, waiting for
// them when the server has not published them yet.
func (c *client) latest(ctx context.Context, path string) ([]Diagnostic, error) {
	c.mu.Lock()
	doc, pub := c.docs[path], c.diags[path]
	var version int
	var seq uint64
	if doc != nil {
		version, seq = doc.version, doc.seq
	}
	c.mu.Unlock()
	switch {
	case doc == nil:
		return nil, nil
	case pub != nil && pub.seq > seq && (pub.version == 0 || pub.version >= version):
		return pub.diags, nil
	}
	return c.wait(ctx, path, seq, version)
}

func (c *client) openCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.docs)
}

// current is the last diagnostics of every document, by path.
func (c *client) current() map[string][]Diagnostic {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string][]Diagnostic, len(c.diags))
	for path, p := range c.diags {
		out[path] = p.diags
	}
	return out
}

// shutdown asks the server to exit, then ends its process group.
func (c *client) shutdown(grace time.Duration) {
	if c.alive() {
		ctx, cancel := context.WithTimeout(context.Background(), grace)
		if c.call(ctx, "shutdown", nil, nil) == nil {
			_ = c.conn.Notify(ctx, "exit", nil)
			select {
			case <-c.proc.done:
			case <-ctx.Done():
			}
		}
		cancel()
	}
	c.kill()
}

func (c *client) kill() {
	c.proc.kill()
	_ = c.conn.Close()
}

// pipe joins a process's stdout and stdin into the stream jsonrpc2 reads
// and writes.
type pipe struct {
	io.Reader
	io.WriteCloser
	closeRead func() error
}

func (p pipe) Close() error {
	err := p.WriteCloser.Close()
	if cerr := p.closeRead(); err == nil {
		err = cerr
	}
	return err
}
