package acp

import (
	"context"

	acpsdk "github.com/coder/acp-go-sdk"
)

// clientFS is which of the client's file system methods it offers.
type clientFS struct{ read, write bool }

func (srv *server) clientFS() clientFS {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	return clientFS{read: srv.client.Fs.ReadTextFile, write: srv.client.Fs.WriteTextFile}
}

// clientEditor is the tools.Editor of a client that offers fs methods:
// read sees the editor's unsaved buffers, and write and edit change them
// through the editor, which shows and saves the change.
type clientEditor struct {
	s  *sess
	fs clientFS
}

func (e *clientEditor) CanRead() bool  { return e.fs.read }
func (e *clientEditor) CanWrite() bool { return e.fs.write }

func (e *clientEditor) ReadTextFile(ctx context.Context, abs string) (string, error) {
	resp, err := e.s.srv.conn.ReadTextFile(ctx, acpsdk.ReadTextFileRequest{SessionId: acpsdk.SessionId(e.s.id), Path: abs})
	if err != nil {
		return "", err
	}
	return resp.Content, nil
}

func (e *clientEditor) WriteTextFile(ctx context.Context, abs, content string) error {
	_, err := e.s.srv.conn.WriteTextFile(ctx, acpsdk.WriteTextFileRequest{SessionId: acpsdk.SessionId(e.s.id), Path: abs, Content: content})
	return err
}
