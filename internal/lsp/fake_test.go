package lsp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sourcegraph/jsonrpc2"
)

// The test binary is also a tiny language server when TINY_LSP_FAKE
// says how it behaves:
//
//	silent: reads everything and never answers (not even initialize);
//	crash:  a working server that kills itself with SIGKILL on the first
//	        change of a document, in the middle of the diagnostics
//	        request, unless TINY_LSP_FAKE_MARK exists (it creates it);
//	        it reports "bad line" for every line that says bad;
//	steady: crash without the crash.
func TestMain(m *testing.M) {
	if mode := os.Getenv("TINY_LSP_FAKE"); mode != "" {
		fakeServer(mode)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func fakeServer(mode string) {
	if f := os.Getenv("TINY_LSP_FAKE_PID"); f != "" {
		_ = os.WriteFile(f, []byte(strconv.Itoa(os.Getpid())), 0o600)
	}
	if mode == "silent" {
		_, _ = io.Copy(io.Discard, os.Stdin)
		return
	}
	stream := jsonrpc2.NewBufferedStream(stdio{}, jsonrpc2.VSCodeObjectCodec{})
	conn := jsonrpc2.NewConn(context.Background(), stream, jsonrpc2.HandlerWithError(fakeHandle))
	<-conn.DisconnectNotify()
}

type stdio struct{}

func (stdio) Read(p []byte) (int, error)  { return os.Stdin.Read(p) }
func (stdio) Write(p []byte) (int, error) { return os.Stdout.Write(p) }
func (stdio) Close() error                { return nil }

func fakeHandle(ctx context.Context, conn *jsonrpc2.Conn, req *jsonrpc2.Request) (any, error) {
	var p struct {
		TextDocument   textDocumentItem `json:"textDocument"`
		ContentChanges []contentChange  `json:"contentChanges"`
	}
	if req.Params != nil {
		_ = json.Unmarshal(*req.Params, &p)
	}
	switch req.Method {
	case "initialize":
		return map[string]any{"capabilities": map[string]any{"textDocumentSync": 1}, "serverInfo": map[string]string{"name": "fake"}}, nil
	case "shutdown":
		return nil, nil
	case "exit":
		os.Exit(0)
	case "textDocument/didChange":
		if mark := os.Getenv("TINY_LSP_FAKE_MARK"); os.Getenv("TINY_LSP_FAKE") == "crash" {
			if _, err := os.Stat(mark); os.IsNotExist(err) {
				_ = os.WriteFile(mark, nil, 0o600)
				_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
			}
		}
		p.TextDocument.Text = p.ContentChanges[len(p.ContentChanges)-1].Text
		fallthrough
	case "textDocument/didOpen":
		var ds []Diagnostic
		for i, line := range strings.Split(p.TextDocument.Text, "\n") {
			if strings.TrimSpace(line) == "bad" {
				ds = append(ds, Diagnostic{Range: Range{Start: Position{Line: i}}, Severity: SeverityError, Source: "fake", Message: "bad line"})
			}
		}
		v := p.TextDocument.Version
		_ = conn.Notify(ctx, "textDocument/publishDiagnostics", publishDiagnosticsParams{URI: p.TextDocument.URI, Version: &v, Diagnostics: ds})
	}
	return nil, nil
}

// fakeManager runs the fake server for .fake files in a new directory.
func fakeManager(t *testing.T, mode string, s Settings) (*Manager, string, string) {
	t.Helper()
	dir := t.TempDir()
	pidFile := filepath.Join(t.TempDir(), "pid")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// The server's program is called fake-lsp (messages name it).
	link := filepath.Join(t.TempDir(), "fake-lsp")
	if err := os.Symlink(exe, link); err != nil {
		t.Fatal(err)
	}
	exe = link
	cfg := map[string]any{"fake": map[string]any{"command": []string{exe}, "extensionToLanguage": map[string]string{".fake": "fake"},
		"env": map[string]string{"TINY_LSP_FAKE": mode, "TINY_LSP_FAKE_PID": pidFile, "TINY_LSP_FAKE_MARK": filepath.Join(t.TempDir(), "crashed")}}}
	data, _ := json.Marshal(cfg)
	if err := s.ApplyLSPJSON(data); err != nil {
		t.Fatal(err)
	}
	m := NewManager(Options{WorkDir: dir, Settings: s})
	t.Cleanup(m.Close)
	return m, dir, pidFile
}

// A server killed in the middle of the request for a change's
// diagnostics: the result says so and that it starts again, the next
// change starts it again and gets its diagnostics.
func TestServerKilledMidRequest(t *testing.T) {
	m, dir, _ := fakeManager(t, "crash", patient())
	path := filepath.Join(dir, "a.fake")
	writeFiles(t, dir, map[string]string{"a.fake": "ok\n"})
	got := edit(t, m, path, "bad\n")
	if !strings.Contains(got, "No diagnostics for a.fake: fake-lsp exited") || !strings.Contains(got, "started again on the next change") {
		t.Fatalf("the crash is not reported as such:\n%s", got)
	}
	got = edit(t, m, path, "bad\nbad\n")
	if want := "a.fake:2:1 error bad line (fake)"; !strings.Contains(got, want) || strings.Contains(got, "a.fake:1:") {
		t.Fatalf("after the restart, want only %q (line 1 was bad before):\n%s", want, got)
	}
	st := m.Status()
	if len(st) != 1 || st[0].Starts != 2 || st[0].State != "running" {
		t.Fatalf("status = %+v, want one running server started twice", st)
	}
}

// A server that never answers: the change's result says its diagnostics
// are pending (the turn goes on), and closing the manager ends it.
func TestServerThatNeverAnswers(t *testing.T) {
	s := DefaultSettings()
	s.Wait, s.StartWait = 1, 1 // at once: this is about what is said, not when
	m, dir, pidFile := fakeManager(t, "silent", s)
	path := filepath.Join(dir, "a.fake")
	writeFiles(t, dir, map[string]string{"a.fake": "ok\n"})
	for range 2 {
		got := edit(t, m, path, "bad\n")
		if !strings.Contains(got, "Diagnostics pending for a.fake: fake-lsp is still starting") {
			t.Fatalf("no pending note:\n%s", got)
		}
	}
	pid := waitPID(t, pidFile)
	if !alive(pid) {
		t.Fatalf("the silent server (pid %d) is not running before Close", pid)
	}
	m.Close()
	if alive(pid) {
		t.Fatalf("the silent server (pid %d) outlived Close", pid)
	}
}

// A file outside the working directory starts no server and gets no
// note; the tool says why.
func TestFileOutsideTheWorkspace(t *testing.T) {
	m, _, pidFile := fakeManager(t, "steady", patient())
	outside := filepath.Join(t.TempDir(), "b.fake")
	writeFiles(t, filepath.Dir(outside), map[string]string{"b.fake": "ok\n"})
	if got := edit(t, m, outside, "bad\n"); got != "" {
		t.Fatalf("a file outside the working directory got:\n%s", got)
	}
	if got := m.Report(context.Background(), outside); !strings.Contains(got, "outside the working directory") {
		t.Fatalf("the tool says %q", got)
	}
	if st := m.Status(); len(st) != 0 {
		t.Fatalf("a server was started: %+v", st)
	}
	if _, err := os.Stat(pidFile); !os.IsNotExist(err) {
		t.Fatalf("the server ran (%v)", err)
	}
}

func waitPID(t *testing.T, file string) int {
	t.Helper()
	for range 12000 { // a race-instrumented test binary starts slowly on a busy machine
		if data, err := os.ReadFile(file); err == nil && len(data) > 0 {
			pid, err := strconv.Atoi(string(data))
			if err != nil {
				t.Fatal(err)
			}
			return pid
		}
		sleepTick()
	}
	t.Fatalf("%s never written", file)
	return 0
}

// alive reports whether pid is a live (not zombie) process.
func alive(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(data), ')')
	return i < 0 || i+2 >= len(data) || data[i+2] != 'Z'
}

func sleepTick() { time.Sleep(10 * time.Millisecond) }

// A read starts the file's server and opens the file in it, so that the
// change that follows finds them ready; Note adds nothing to a read.
func TestReadWarmsTheServer(t *testing.T) {
	m, dir, _ := fakeManager(t, "steady", patient())
	writeFiles(t, dir, map[string]string{"a.fake": "bad\n"})
	e := NewEffects(m, nil)
	e.Before(context.Background(), "t1", "read", json.RawMessage(`{"path":"a.fake"}`))
	if note := e.Note(context.Background(), "t1", "read", false); note != "" {
		t.Fatalf("a read got %q", note)
	}
	for i := 0; ; i++ {
		if st := m.Status(); len(st) == 1 && st[0].State == "running" && st[0].Files == 1 {
			break
		}
		if i == 6000 {
			t.Fatalf("no server with the file open after the read: %+v", m.Status())
		}
		sleepTick()
	}
	// The file's errors were there before: a write that keeps them adds
	// nothing, one that adds one reports it.
	e.Before(context.Background(), "t2", "write", json.RawMessage(`{"path":"a.fake"}`))
	writeFiles(t, dir, map[string]string{"a.fake": "bad\nok\n"})
	if note := e.Note(context.Background(), "t2", "write", false); note != "" {
		t.Fatalf("an unchanged error was reported: %q", note)
	}
	e.Before(context.Background(), "t3", "write", json.RawMessage(`{"path":"a.fake"}`))
	writeFiles(t, dir, map[string]string{"a.fake": "bad\nok\nbad\n"})
	if note := e.Note(context.Background(), "t3", "write", false); !strings.Contains(note, "a.fake:3:1 error bad line (fake)") {
		t.Fatalf("the new error is not reported: %q", note)
	}
}
