// Package storetest sets up session directories for the tests and
// benchmarks of the packages that open sessions.
package storetest

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tiny-agent/tiny-go/internal/session"
	"github.com/tiny-agent/tiny-go/internal/session/sessiontest"
	"github.com/tiny-agent/tiny-go/internal/store"
)

// InstallSession puts (a hard link to, or a copy of) the session file
// src into the sessions directory of a new working directory, under the
// name the store gives it.
func InstallSession(tb testing.TB, src string) (cwd, id string) {
	h := sessiontest.Header(tb, src)
	cwd = tb.TempDir()
	dir := store.SessionsDir(cwd)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		tb.Fatal(err)
	}
	dst := filepath.Join(dir, store.FileName(time.UnixMilli(h.CreatedAt), h.ID))
	if err := os.Link(src, dst); err != nil {
		data, err := os.ReadFile(src)
		if err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(dst, data, 0o600); err != nil {
			tb.Fatal(err)
		}
	}
	return cwd, h.ID
}

// InstallGenerated leaves n sessions in cwd's sessions directory, as a
// user's earlier runs would have: the generator's session of about facts
// facts (runs of prompts, tool calls and answers) under n ids of their
// own, the newest last. It returns their paths.
func InstallGenerated(tb testing.TB, cwd string, n, facts int) []string {
	tb.Helper()
	base := sessiontest.Generate(sessiontest.Options{Facts: facts, Seed: 3})
	nl := bytes.IndexByte(base, '\n')
	h, c := session.DecodeHeader(base[:nl])
	if c != nil {
		tb.Fatal(c)
	}
	dir := store.SessionsDir(cwd)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		tb.Fatal(err)
	}
	h.Cwd = cwd
	var paths []string
	for range n {
		id, err := store.NewID()
		if err != nil {
			tb.Fatal(err)
		}
		h.ID, h.CreatedAt = id, h.CreatedAt+1
		path := filepath.Join(dir, store.FileName(time.UnixMilli(h.CreatedAt), id))
		if err := os.WriteFile(path, append(session.EncodeHeader(h), base[nl+1:]...), 0o600); err != nil {
			tb.Fatal(err)
		}
		paths = append(paths, path)
	}
	return paths
}

// SessionID is the id in a session file's name (<stamp>_<id>.jsonl).
func SessionID(path string) string {
	name := strings.TrimSuffix(filepath.Base(path), ".jsonl")
	return name[strings.LastIndexByte(name, '_')+1:]
}
