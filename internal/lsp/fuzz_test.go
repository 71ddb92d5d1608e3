package lsp

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"
)

// frame is one message as a server writes it.
func frame(body string) string {
	return fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body)
}

// FuzzServerOutput feeds arbitrary bytes as a server's output to the
// client: the framing, the JSON-RPC messages, the requests a server makes
// and the diagnostics it publishes. Nothing panics, and every diagnostic
// kept is shown as one line that starts with its position.
func FuzzServerOutput(f *testing.F) {
	f.Add(frame(`{"jsonrpc":"2.0","method":"textDocument/publishDiagnostics","params":{"uri":"file:///w/a.go","version":2,"diagnostics":[{"range":{"start":{"line":3,"character":13},"end":{"line":3,"character":16}},"severity":1,"source":"compiler","message":"cannot use \"x\"\n  as int"}]}}`))
	f.Add(frame(`{"jsonrpc":"2.0","id":1,"method":"workspace/configuration","params":{"items":[{},{}]}}`) +
		frame(`{"jsonrpc":"2.0","id":"x","method":"window/workDoneProgress/create","params":{"token":1}}`))
	f.Add(frame(`{"jsonrpc":"2.0","method":"textDocument/publishDiagnostics","params":{"uri":"http://x/%zz","diagnostics":null}}`))
	f.Add("Content-Length: 99999999999999999999\r\n\r\n{}")
	f.Add("Content-Length: 5\r\nContent-Type: x\r\n\r\n{}{}{")
	f.Add(frame(`{"jsonrpc":"2.0","id":7,"result":{"capabilities":{}}}`))
	f.Fuzz(func(t *testing.T, out string) {
		c := newClient(Server{Name: "fuzz"}, "/w", &fakeConn{r: strings.NewReader(out)})
		<-c.conn.DisconnectNotify()
		for path, ds := range c.current() {
			for _, d := range ds {
				line := formatDiagnostic(path, "fuzz", d)
				if strings.ContainsAny(line, "\n\r") {
					t.Fatalf("a diagnostic spans lines: %q", line)
				}
				if !strings.HasPrefix(line, fmt.Sprintf("%s:%d:%d ", path, d.Range.Start.Line+1, d.Range.Start.Character+1)) {
					t.Fatalf("no position first: %q", line)
				}
			}
		}
	})
}

// fakeConn is a server's stdio: its output is r, what the client writes
// is dropped.
type fakeConn struct {
	r io.Reader
	w bytes.Buffer
}

func (c *fakeConn) Read(p []byte) (int, error)  { return c.r.Read(p) }
func (c *fakeConn) Write(p []byte) (int, error) { return c.w.Write(p) }
func (c *fakeConn) Close() error                { return nil }

// FuzzSettings: .lsp.json and [lsp] tables of any shape are accepted or
// refused without a panic, and what is accepted yields servers with a
// command and extensions only.
func FuzzSettings(f *testing.F) {
	f.Add(`{"go":{"command":"gopls","args":["serve"],"extensionToLanguage":{".go":"go"}}}`)
	f.Add(`{"wait":"2s","start_wait":"5s","python":{"off":true},"go":{"command":["gopls","-rpc.trace"]}}`)
	f.Add(`{"mine":{"command":["x"],"extensionToLanguage":{".x":"x"},"env":{"A":"1"},"rootMarkers":["m"],"initializationOptions":{"a":1}}}`)
	f.Add(`{"off":true}`)
	f.Add(`{"go":{"command":[],"transport":"socket"}}`)
	f.Fuzz(func(t *testing.T, data string) {
		for _, apply := range []func(*Settings, []byte) error{(*Settings).ApplyLSPJSON, (*Settings).ApplyTable} {
			s := DefaultSettings()
			if apply(&s, []byte(data)) != nil {
				continue
			}
			if s.Wait <= 0 || s.StartWait <= 0 {
				t.Fatalf("bounds %v %v accepted", s.Wait, s.StartWait)
			}
			for _, sv := range s.Servers(func(string) (string, error) { return "/bin/x", nil }) {
				if len(sv.Command) == 0 || strings.TrimSpace(sv.Command[0]) == "" {
					t.Fatalf("server %q without a command", sv.Name)
				}
				for ext := range sv.Languages {
					if !strings.HasPrefix(ext, ".") {
						t.Fatalf("server %q: extension %q", sv.Name, ext)
					}
				}
			}
		}
	})
}
