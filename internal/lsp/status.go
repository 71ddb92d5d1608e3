package lsp

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/tiny-agent/tiny-go/internal/store"
)

// Status is one server of one root, as `tiny-go lsp status` and
// /diagnostics show it.
type Status struct {
	Name     string    `json:"name"`
	Server   string    `json:"server,omitempty"` // what it calls itself
	Root     string    `json:"root"`
	Command  []string  `json:"command"`
	PID      int       `json:"pid,omitempty"`
	State    string    `json:"state"` // starting, running, exited, failed
	Since    time.Time `json:"since"`
	Starts   int       `json:"starts"`
	Files    int       `json:"files"` // documents open in it
	Error    string    `json:"error,omitempty"`
	TinyPID  int       `json:"tinyPid"` // the tiny-go process that runs it
	LastExit string    `json:"lastExit,omitempty"`
}

// Status lists the servers this manager started, by name and root.
func (m *Manager) Status() []Status {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Status
	for _, k := range slices.SortedFunc(maps.Keys(m.slots), func(a, b slotKey) int {
		return strings.Compare(a.name+"\x00"+a.root, b.name+"\x00"+b.root)
	}) {
		s := m.slots[k]
		st := Status{Name: s.server.Name, Root: s.root, Command: s.server.Command, Since: s.since,
			Starts: s.starts, TinyPID: os.Getpid(), LastExit: s.lastExit}
		switch a := s.cur; {
		case a == nil:
			continue
		case !a.finished():
			st.State = "starting"
		case a.err != nil:
			st.State, st.Error = "failed", a.err.Error()
		case a.c.alive():
			st.State, st.PID, st.Server = "running", a.c.proc.pgid, a.c.name
			st.Files = a.c.openCount()
		default:
			st.State, st.Error = "exited", a.c.deadError().Error()
		}
		out = append(out, st)
	}
	return out
}

// statusFile is .tiny-agent/lsp/run-<pid>.json: the servers of one
// tiny-go process, for `tiny-go lsp status` in another.
type statusFile struct {
	workDir string
	mu      sync.Mutex
	written bool
	closed  bool // removed for good: the manager is closed
}

func (f *statusFile) path(pid int) (string, error) {
	dir, err := store.StateDir(f.workDir, "lsp", true)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "run-"+strconv.Itoa(pid)+".json"), nil
}

// saveStatus writes the status file (best effort: it only informs).
func (m *Manager) saveStatus() {
	st := m.Status()
	f := &m.status
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return // and no directory made again
	}
	p, err := f.path(os.Getpid())
	if err != nil {
		return
	}
	data, err := json.Marshal(st)
	if err != nil {
		return
	}
	tmp := p + ".tmp"
	if os.WriteFile(tmp, data, 0o600) == nil && os.Rename(tmp, p) == nil {
		f.written = true
	}
}

func (f *statusFile) remove() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	if p, err := f.path(os.Getpid()); err == nil && f.written {
		_ = os.Remove(p)
	}
}

// ReadStatus lists the servers of every tiny-go process of workDir that
// is still alive; the files of processes that are gone are removed.
func ReadStatus(workDir string) ([]Status, error) {
	dir, err := store.StateDir(workDir, "lsp", false)
	if err != nil || dir == "" {
		return nil, nil
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Status
	for _, e := range entries {
		pidText, ok := strings.CutPrefix(strings.TrimSuffix(e.Name(), ".json"), "run-")
		pid, err := strconv.Atoi(pidText)
		if !ok || err != nil || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if syscall.Kill(pid, 0) == syscall.ESRCH {
			_ = os.Remove(p)
			continue
		}
		data, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		var st []Status
		if err := json.Unmarshal(data, &st); err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		out = append(out, st...)
	}
	return out, nil
}

// StatusLines are `tiny-go lsp status` for people: the servers in effect
// and, for each one running in a tiny-go process of this directory, its
// root, pid, state and open files. missing are the built-in servers of
// the project's languages that are not on PATH: a line each says how to
// install it.
func StatusLines(workDir string, servers []Server, missing []Missing, running []Status) []string {
	var lines []string
	if len(servers) == 0 {
		lines = append(lines, "No language server found on PATH or configured (gopls, pyright-langserver, basedpyright-langserver, typescript-language-server, rust-analyzer, clangd).")
	} else {
		lines = append(lines, "Servers in effect:")
		for _, s := range servers {
			lines = append(lines, fmt.Sprintf("  %-11s %s  (%s)", s.Name, strings.Join(s.Command, " "), strings.Join(slices.Sorted(maps.Keys(s.Languages)), " ")))
		}
	}
	for _, m := range missing {
		lines = append(lines, "Missing: "+m.Hint())
	}
	if len(running) == 0 {
		return append(lines, "None runs now: a server starts when a file it checks is changed.")
	}
	lines = append(lines, "Running:")
	for _, st := range running {
		root := st.Root
		if rel, err := filepath.Rel(workDir, root); err == nil && rel == "." {
			root = "."
		} else if err == nil && !strings.HasPrefix(rel, "..") {
			root = "./" + filepath.ToSlash(rel)
		}
		line := fmt.Sprintf("  %-11s %-8s root %s", st.Name, st.State, root)
		if st.PID != 0 {
			line += fmt.Sprintf(", pid %d, %d open files", st.PID, st.Files)
		}
		line += fmt.Sprintf(", since %s, started %d×, tiny-go pid %d", st.Since.Local().Format("15:04:05"), st.Starts, st.TinyPID)
		if st.Error != "" {
			line += ": " + st.Error
		}
		lines = append(lines, line)
	}
	return lines
}
