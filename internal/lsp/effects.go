package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// Effects connects tool calls to a Manager: Before runs when a call's
// intent is durable and its effect is about to start, Note when the
// effect ended, before its result is committed. Note's text is appended
// to the result, so it is part of what the session commits, and a
// resume, which never runs a committed call again, never asks again.
type Effects struct {
	m       *Manager
	changed func(ctx context.Context, toolStartedID string) ([]string, error)

	mu      sync.Mutex
	pending map[string]Change // write and edit targets, by toolStartedID
}

// NewEffects makes the tool-call side of m. changed lists the files a
// call changed, relative to the working directory (the checkpoints'
// record); nil leaves commands unchecked.
func NewEffects(m *Manager, changed func(ctx context.Context, toolStartedID string) ([]string, error)) *Effects {
	return &Effects{m: m, changed: changed, pending: map[string]Change{}}
}

// maxCommandFiles caps the files of one command that are checked.
const maxCommandFiles = 20

// Before reads the text of the file a write or edit is about to change
// and lets its server work on it meanwhile (Prepare). A read does the
// same for the file it reads: a change usually follows, and finds the
// server started and the file checked.
func (e *Effects) Before(_ context.Context, toolStartedID, tool string, args json.RawMessage) {
	if tool != "write" && tool != "edit" && tool != "read" {
		return
	}
	path, ok := e.argPath(args)
	if !ok {
		return
	}
	if _, has, err := e.m.targetOf(path); !has || err != nil {
		return
	}
	ch := Change{Path: path, Known: true}
	if tool == "read" {
		if text, exists, err := readText(path); err == nil && exists {
			e.m.Prepare(Change{Path: path, Known: true, Before: text})
		}
		return
	}
	text, exists, err := readText(path)
	switch {
	case err != nil:
		ch.Known = false
	case !exists:
		ch.Absent = true
	default:
		ch.Before = text
	}
	e.mu.Lock()
	e.pending[toolStartedID] = ch
	e.mu.Unlock()
	e.m.Prepare(ch)
}

// Note is the text to append to a call's result: the diagnostics its
// change introduced, "" when there are none or the call changed no
// source file. A failed write or edit changed nothing.
func (e *Effects) Note(ctx context.Context, toolStartedID, tool string, failed bool) string {
	e.mu.Lock()
	ch, wrote := e.pending[toolStartedID]
	delete(e.pending, toolStartedID)
	e.mu.Unlock()
	switch {
	case wrote && !failed:
		return e.m.Check(ctx, []Change{ch})
	case wrote, tool == "read", tool == "write", tool == "edit", tool == "bg", tool == ToolName, e.changed == nil:
		// bg: its process goes on changing files after the call.
		return ""
	}
	paths, err := e.changed(ctx, toolStartedID)
	if err != nil {
		return ""
	}
	var changes []Change
	for _, p := range paths {
		if !filepath.IsAbs(p) {
			p = filepath.Join(e.m.opts.WorkDir, filepath.FromSlash(p))
		}
		if _, has, err := e.m.targetOf(p); has && err == nil {
			changes = append(changes, Change{Path: p})
		}
	}
	extra := ""
	if len(changes) > maxCommandFiles {
		extra = "\n(" + strconv.Itoa(len(changes)-maxCommandFiles) + " more changed source files were not checked.)"
		changes = changes[:maxCommandFiles]
	}
	note := e.m.Check(ctx, changes)
	if note == "" {
		return ""
	}
	return note + extra
}

// argPath is the absolute path a write or edit names (through a
// symlink, as they write).
func (e *Effects) argPath(args json.RawMessage) (string, bool) {
	var a struct {
		Path string `json:"path"`
	}
	if json.Unmarshal(args, &a) != nil || strings.TrimSpace(a.Path) == "" {
		return "", false
	}
	p := a.Path
	if !filepath.IsAbs(p) {
		p = filepath.Join(e.m.opts.WorkDir, p)
	}
	p = filepath.Clean(p)
	return resolve(p)
}

// resolve is path through its symlinks; a file about to be created
// through its directory's.
func resolve(p string) (string, bool) {
	resolved, err := filepath.EvalSymlinks(p)
	if err == nil {
		return resolved, true
	}
	if !errors.Is(err, os.ErrNotExist) {
		return "", false
	}
	if dir, err := filepath.EvalSymlinks(filepath.Dir(p)); err == nil {
		return filepath.Join(dir, filepath.Base(p)), true
	}
	return p, true
}
