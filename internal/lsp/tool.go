package lsp

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tiny-agent/tiny-go/internal/tools"
)

// ToolName is the model's tool.
const ToolName = "diagnostics"

// Tool is the diagnostics tool: the errors and warnings a file's server
// reports now, or those of every file open in a running server.
func (m *Manager) Tool() tools.Tool { return diagnosticsTool{m: m} }

type diagnosticsTool struct{ m *Manager }

func (diagnosticsTool) Definition() tools.Definition {
	return tools.Definition{
		Name: ToolName,
		Description: "Errors and warnings of the language server (gopls, pyright, typescript-language-server, rust-analyzer, clangd) " +
			"for a file, or without a path for every file the servers have open. " +
			"Changes made with write, edit and bash already report the diagnostics they introduced.",
		Parameters: jsontext.Value(`{"type":"object","properties":{` +
			`"path":{"type":"string","description":"The file to check (relative to the working directory, or absolute). Omit for every open file."}` +
			`}}`),
	}
}

// Replay: it changes nothing, but only the built-in read is ever replayed
// (runtime.md).
func (diagnosticsTool) Replay() tools.Replay {
	return tools.Replay{Policy: tools.ReplayNever, Key: "builtin:diagnostics:v1"}
}

func (d diagnosticsTool) Run(ctx context.Context, args jsontext.Value) tools.Result {
	var a struct {
		Path *string `json:"path"`
	}
	if err := json.Unmarshal(args, &a); err != nil {
		return tools.Result{Content: "Error: invalid arguments: " + err.Error(), IsError: true}
	}
	if a.Path == nil || strings.TrimSpace(*a.Path) == "" {
		return tools.Result{Content: d.m.Report(ctx, "")}
	}
	return tools.Result{Content: d.m.Report(ctx, *a.Path)}
}

// Report is what the diagnostics tool and /diagnostics show: every error
// and warning of path (relative to the working directory, or absolute)
// as its server reports it now, or, for "", those of every file open in
// a running server.
func (m *Manager) Report(ctx context.Context, path string) string {
	if path == "" {
		return m.reportOpen()
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(m.opts.WorkDir, path)
	}
	path, _ = resolve(filepath.Clean(path))
	rel := m.display(path)
	t, ok, err := m.targetOf(path)
	switch {
	case err != nil:
		return fmt.Sprintf("%s is outside the working directory: no language server is started for it.", rel)
	case !ok:
		return fmt.Sprintf("No language server checks %s files here (%s).", extOf(path), m.inEffect()) + m.missingHint(path)
	}
	wait := m.opts.Settings.Wait
	if !m.running(t) {
		wait = max(wait, m.opts.Settings.StartWait)
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	c, err := m.client(ctx, t)
	if err == nil {
		var ds []Diagnostic
		if ds, err = m.diagnose(ctx, c, t, path); err == nil {
			return m.listing(rel, c.name, ds)
		}
	}
	if err == errNoAnswer {
		return fmt.Sprintf("Diagnostics pending for %s: %s did not answer within %s; ask again later.", rel, t.server.Program(), wait)
	}
	return fmt.Sprintf("No diagnostics for %s: %v.", rel, err)
}

// listing is every error and warning of one file, capped.
func (m *Manager) listing(rel, server string, ds []Diagnostic) string {
	ds = slices.DeleteFunc(slices.Clone(ds), func(d Diagnostic) bool { return d.Severity > SeverityWarning })
	if len(ds) == 0 {
		return fmt.Sprintf("No errors or warnings in %s (%s).", rel, server)
	}
	return strings.Join(formatList(rel, server, ds, perFile), "\n")
}

// reportOpen lists the errors and warnings of every open file.
func (m *Manager) reportOpen() string {
	m.mu.Lock()
	var cs []*client
	for _, s := range m.slots {
		if c := s.up(); c != nil {
			cs = append(cs, c)
		}
	}
	m.mu.Unlock()
	if len(cs) == 0 {
		return "No language server is running: one starts when a file it checks is changed, or with diagnostics {path}. " +
			m.inEffect() + "."
	}
	var lines []string
	files := 0
	for _, c := range cs {
		cur := c.current()
		for _, p := range slices.Sorted(maps.Keys(cur)) {
			files++
			ds := slices.DeleteFunc(slices.Clone(cur[p]), func(d Diagnostic) bool { return d.Severity > SeverityWarning })
			lines = append(lines, formatList(m.display(p), c.name, ds, perFile)...)
		}
	}
	if len(lines) == 0 {
		return fmt.Sprintf("No errors or warnings in the %d files the language servers have open.", files)
	}
	return strings.Join(lines, "\n")
}

// inEffect names the servers in effect, for a message.
func (m *Manager) inEffect() string {
	var names []string
	for _, s := range m.Servers() {
		names = append(names, s.Name+" ("+s.Command[0]+")")
	}
	if len(names) == 0 {
		return "none found on PATH"
	}
	return "servers in effect: " + strings.Join(names, ", ")
}

// missingHint is " " and the install hint of the built-in server that
// would check path were it on PATH, else "".
func (m *Manager) missingHint(path string) string {
	if vendored(path) {
		return ""
	}
	if mi, ok := missingFor(m.opts.Settings.Missing(m.opts.LookPath), path); ok {
		return " " + mi.Hint()
	}
	return ""
}

func extOf(path string) string {
	if e := filepath.Ext(path); e != "" {
		return e
	}
	return filepath.Base(path)
}
