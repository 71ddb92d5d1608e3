// Package lsp runs language servers for tiny-go and turns what they
// report into text for the model: after a change to a file, the errors
// and warnings the change introduced (docs/lsp.md).
//
// Servers are found on PATH by file type (or configured), started on
// first use, one per workspace root and server, in the same containment
// as commands, restarted when they crash, and stopped with tiny-go.
package lsp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/tiny-agent/tiny-go/internal/procs"
	"github.com/tiny-agent/tiny-go/internal/sandbox"
)

// Options configure a Manager.
type Options struct {
	// WorkDir is the absolute working directory: servers start only for
	// files under it, and log under its .tiny-agent/lsp/.
	WorkDir string
	// Env is the servers' environment (nil: tiny-go's); the host leaves
	// its credentials out, as for commands.
	Env      []string
	Sandbox  *sandbox.Sandbox
	Procs    *procs.Tracker
	Settings Settings
	// LookPath finds a server's program (nil: exec.LookPath).
	LookPath func(string) (string, error)
}

// Manager owns the running servers of one tiny-go process. Nothing is
// started, nor even looked up on PATH, before the first file needs it.
type Manager struct {
	opts    Options
	once    sync.Once
	servers []Server // what Settings.servers gives, absent ones too

	mu       sync.Mutex
	slots    map[slotKey]*slot
	prepares map[string]chan struct{} // by path: a baseline being taken
	closed   bool
	status   statusFile
	// life ends with Close: a start still waiting for its server's
	// answer then gives up and kills it.
	life context.Context
	end  context.CancelFunc
}

type slotKey struct{ name, root string }

// slot is one server for one root, across its restarts.
type slot struct {
	server   Server
	root     string
	cur      *attempt // the current start, nil before the first
	starts   int
	since    time.Time
	lastExit string
}

// attempt is one start of a server; c and err are set before ready is
// closed.
type attempt struct {
	ready chan struct{}
	c     *client
	err   error
}

func (a *attempt) finished() bool {
	select {
	case <-a.ready:
		return true
	default:
		return false
	}
}

// up is the running client of the slot, or nil.
func (s *slot) up() *client {
	if s.cur != nil && s.cur.finished() && s.cur.c != nil && s.cur.c.alive() {
		return s.cur.c
	}
	return nil
}

// maxStarts bounds the starts of one server for one root: a server that
// keeps crashing is left alone after that.
const maxStarts = 4

// initTimeout bounds a server's initialize; a start goes on in the
// background after the wait of the change that asked for it.
const initTimeout = 60 * time.Second

// NewManager makes a manager; it starts nothing.
func NewManager(o Options) *Manager {
	if o.Settings.entries == nil {
		o.Settings = DefaultSettings()
	}
	if real, err := filepath.EvalSymlinks(o.WorkDir); err == nil {
		o.WorkDir = real // paths are compared after resolving links
	}
	life, end := context.WithCancel(context.Background())
	return &Manager{opts: o, slots: map[slotKey]*slot{}, prepares: map[string]chan struct{}{},
		status: statusFile{workDir: o.WorkDir}, life: life, end: end}
}

// Servers are the servers in effect (looked up once).
func (m *Manager) Servers() []Server {
	var out []Server
	for _, sv := range m.all() {
		if !sv.absent {
			out = append(out, sv)
		}
	}
	return out
}

func (m *Manager) all() []Server {
	m.once.Do(func() { m.servers = m.opts.Settings.servers(m.opts.LookPath) })
	return m.servers
}

// errOutside is a file outside the working directory.
var errOutside = errors.New("outside the working directory")

// target is a file's server and root, or why there is none.
type target struct {
	server Server
	lang   string
	root   string
}

func (m *Manager) targetOf(path string) (target, bool, error) {
	sv, lang, ok := serverFor(m.all(), path)
	if !ok || vendored(path) {
		return target{}, false, nil
	}
	root, inside := rootOf(m.opts.WorkDir, path, sv.RootMarkers)
	if !inside {
		return target{}, false, errOutside
	}
	if sv.projectTS {
		if tsc := projectTypeScript(root); tsc != "" {
			sv.Command, sv.absent = append([]string{tsc}, tsLSPArgs...), false
		}
	}
	if sv.absent {
		return target{}, false, nil
	}
	return target{server: sv, lang: lang, root: root}, true, nil
}

// vendored reports whether path is in a directory of other people's code
// (node_modules, .git): no server is started for it.
func vendored(path string) bool {
	for _, part := range strings.Split(filepath.ToSlash(path), "/") {
		if part == "node_modules" || part == ".git" {
			return true
		}
	}
	return false
}

// running reports whether t's server is up (so a change waits the
// shorter bound).
func (m *Manager) running(t target) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.slots[slotKey{t.server.Name, t.root}]
	return s != nil && s.up() != nil
}

// client returns t's server, starting it (again) when it is not running,
// and waiting for it until ctx ends (errNoAnswer: still starting).
func (m *Manager) client(ctx context.Context, t target) (*client, error) {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil, errors.New("tiny-go is stopping")
	}
	k := slotKey{t.server.Name, t.root}
	s := m.slots[k]
	if s == nil {
		s = &slot{server: t.server, root: t.root}
		m.slots[k] = s
	}
	if s.cur == nil || s.cur.finished() && s.up() == nil {
		if s.cur != nil && s.cur.c != nil {
			s.lastExit = s.cur.c.deadError().Error()
		}
		if s.starts >= maxStarts {
			m.mu.Unlock()
			return nil, fmt.Errorf("%s stopped %d times; it is not started again (its log: .tiny-agent/lsp/%s.log)", t.server.Program(), s.starts, safeName(t.server.Name))
		}
		m.launch(s)
	}
	a := s.cur
	m.mu.Unlock()
	select {
	case <-a.ready:
		return a.c, a.err
	case <-ctx.Done():
		return nil, errNoAnswer
	}
}

// launch starts s's server in the background; m.mu is held.
func (m *Manager) launch(s *slot) {
	s.starts++
	s.since = time.Now()
	a := &attempt{ready: make(chan struct{})}
	s.cur = a
	sp := spawner{workDir: m.opts.WorkDir, env: m.opts.Env, sandbox: m.opts.Sandbox, procs: m.opts.Procs}
	go func() {
		ctx, cancel := context.WithTimeout(m.life, initTimeout)
		c, err := startClient(ctx, s.server, s.root, sp)
		cancel()
		m.mu.Lock()
		closed := m.closed
		if closed && c != nil {
			c.kill()
			c, err = nil, errors.New("tiny-go is stopping")
		}
		a.c, a.err = c, err
		close(a.ready)
		m.mu.Unlock()
		m.saveStatus()
		if c != nil {
			<-c.dead
			m.saveStatus()
		}
	}()
	go m.saveStatus()
}

// Close stops every server: politely first (shutdown, exit), then by
// killing its process group.
func (m *Manager) Close() {
	m.mu.Lock()
	m.closed = true
	var cs []*client
	var starting []chan struct{}
	for _, s := range m.slots {
		switch {
		case s.cur == nil:
		case !s.cur.finished():
			starting = append(starting, s.cur.ready)
		case s.cur.c != nil:
			cs = append(cs, s.cur.c)
		}
	}
	m.mu.Unlock()
	m.end() // a start in progress kills its server
	for _, ready := range starting {
		<-ready
	}
	var wg sync.WaitGroup
	for _, c := range cs {
		wg.Go(func() { c.shutdown(time.Second) })
	}
	wg.Wait()
	m.status.remove()
}

// readText reads a file to give its server; ok is false when it is gone.
func readText(path string) (string, bool, error) {
	fi, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	if fi.IsDir() || fi.Size() > maxFileBytes {
		return "", false, fmt.Errorf("%s is not a source file of at most %d MiB", filepath.Base(path), maxFileBytes>>20)
	}
	data, err := os.ReadFile(path)
	return string(data), err == nil, err
}

// maxFileBytes is the largest file given to a server.
const maxFileBytes = 4 << 20
