package lsp

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Change is one file a tool call changed.
type Change struct {
	// Path is absolute.
	Path string
	// Before is the file's text before the change when it is known (write
	// and edit read it first); Known says whether it is. A file that did
	// not exist before is Known with Absent set.
	Before        string
	Known, Absent bool
}

// Prepare gives a file's server its text from before a change, while the
// change is being made: the server (started if need be) works out the
// diagnostics to compare with in the meantime. It never blocks.
func (m *Manager) Prepare(ch Change) {
	if !ch.Known || ch.Absent {
		return
	}
	t, ok, err := m.targetOf(ch.Path)
	if !ok || err != nil {
		return
	}
	done := make(chan struct{})
	m.mu.Lock()
	if m.prepares[ch.Path] != nil {
		m.mu.Unlock()
		return
	}
	m.prepares[ch.Path] = done
	m.mu.Unlock()
	go func() {
		defer func() {
			m.mu.Lock()
			delete(m.prepares, ch.Path)
			m.mu.Unlock()
			close(done)
		}()
		ctx, cancel := context.WithTimeout(context.Background(), initTimeout)
		defer cancel()
		if c, err := m.client(ctx, t); err == nil {
			_, _, _, _ = c.sync(ctx, ch.Path, t.lang, ch.Before)
		}
	}()
}

// Check asks the servers of the changed files for their diagnostics and
// returns what the changes introduced, as text to append to the tool's
// result ("" when nothing was introduced). It waits at most the bound of
// the settings (the longer one when a server has to start) or until ctx
// ends, then says which diagnostics are pending.
func (m *Manager) Check(ctx context.Context, changes []Change) string {
	var targets []target
	var files []Change
	wait := m.opts.Settings.Wait
	for _, ch := range changes {
		t, ok, _ := m.targetOf(ch.Path)
		if !ok {
			continue
		}
		if !m.running(t) {
			wait = max(wait, m.opts.Settings.StartWait)
		}
		targets, files = append(targets, t), append(files, ch)
	}
	if len(files) == 0 {
		return ""
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	reports := make([]report, len(files))
	for i := range files {
		reports[i] = m.checkOne(ctx, targets[i], files[i])
	}
	m.saveStatus()
	return m.render(reports, wait)
}

// report is what one file's check found.
type report struct {
	path, server string
	introduced   []Diagnostic
	pending      string // why there is no answer yet
	failed       string // why there will be none for this change
}

func (m *Manager) checkOne(ctx context.Context, t target, ch Change) report {
	r := report{path: ch.Path, server: t.server.Name}
	m.awaitPrepare(ctx, ch.Path)
	c, err := m.client(ctx, t)
	switch {
	case errors.Is(err, errNoAnswer):
		r.pending = t.server.Program() + " is still starting"
		return r
	case err != nil:
		r.failed = err.Error()
		return r
	}
	r.server = c.name
	before, err := m.baseline(ctx, c, t, ch)
	if err == nil {
		var after []Diagnostic
		after, err = m.diagnose(ctx, c, t, ch.Path)
		r.introduced = introduced(before, after)
	}
	switch {
	case errors.Is(err, errNoAnswer):
		r.pending = c.name + " did not answer in time"
	case err != nil:
		r.failed = err.Error() + "; it is started again on the next change"
	}
	return r
}

// awaitPrepare waits for the baseline Prepare is taking of path.
func (m *Manager) awaitPrepare(ctx context.Context, path string) {
	m.mu.Lock()
	done := m.prepares[path]
	m.mu.Unlock()
	if done != nil {
		select {
		case <-done:
		case <-ctx.Done():
		}
	}
}

// baseline is the diagnostics of the file before the change: those of
// the text the server already has when that is the old text, else those
// of the old text given now. A file that was absent, or whose old text
// is unknown and that the server never had, had none.
func (m *Manager) baseline(ctx context.Context, c *client, t target, ch Change) ([]Diagnostic, error) {
	text, open := c.text(ch.Path)
	switch {
	case ch.Known && ch.Absent:
		return nil, nil
	case ch.Known && (!open || text != ch.Before):
		version, seq, _, err := c.sync(ctx, ch.Path, t.lang, ch.Before)
		if err != nil {
			return nil, err
		}
		return c.wait(ctx, ch.Path, seq, version)
	case open:
		return c.latest(ctx, ch.Path)
	}
	return nil, nil
}

// diagnose gives the server the file's text on disk and returns its
// diagnostics of it.
func (m *Manager) diagnose(ctx context.Context, c *client, t target, path string) ([]Diagnostic, error) {
	text, exists, err := readText(path)
	if err != nil {
		return nil, err
	}
	if !exists {
		c.closeDocument(ctx, path)
		return nil, nil
	}
	version, seq, same, err := c.sync(ctx, path, t.lang, text)
	if err != nil {
		return nil, err
	}
	if same {
		return c.latest(ctx, path)
	}
	return c.wait(ctx, path, seq, version)
}

// introduced are the errors and warnings of after that before did not
// have. Positions are not compared (a change moves the lines below it):
// a diagnostic is the same when its severity, source, code and message
// are, counted as a multiset.
func introduced(before, after []Diagnostic) []Diagnostic {
	seen := map[string]int{}
	for _, d := range before {
		seen[identity(d)]++
	}
	var out []Diagnostic
	for _, d := range after {
		if d.Severity > SeverityWarning {
			continue
		}
		if id := identity(d); seen[id] > 0 {
			seen[id]--
			continue
		}
		out = append(out, d)
	}
	return out
}

func identity(d Diagnostic) string {
	return fmt.Sprintf("%d\x00%s\x00%s\x00%s", d.Severity, d.Source, d.Code, d.Message)
}

// perFile caps the diagnostics shown of one file.
const perFile = 20

// render is the text appended to a tool result.
func (m *Manager) render(reports []report, wait time.Duration) string {
	var lines, notes []string
	for _, r := range reports {
		rel := m.display(r.path)
		switch {
		case r.pending != "":
			notes = append(notes, fmt.Sprintf("Diagnostics pending for %s: %s after %s; call the diagnostics tool to see them later.", rel, r.pending, wait))
		case r.failed != "":
			notes = append(notes, fmt.Sprintf("No diagnostics for %s: %s.", rel, r.failed))
		default:
			lines = append(lines, formatList(rel, r.server, r.introduced, perFile)...)
		}
	}
	if len(lines) == 0 && len(notes) == 0 {
		return ""
	}
	var b strings.Builder
	if len(lines) > 0 {
		b.WriteString("\n\nDiagnostics introduced by this change:\n")
		b.WriteString(strings.Join(lines, "\n"))
	}
	if len(notes) > 0 {
		b.WriteString("\n\n")
		b.WriteString(strings.Join(notes, "\n"))
	}
	return b.String()
}

// formatList is one line per diagnostic, `path:line:col severity message
// (source)`, sorted by position, at most limit of them and then a count
// of the rest.
func formatList(rel, server string, ds []Diagnostic, limit int) []string {
	ds = slices.Clone(ds)
	slices.SortStableFunc(ds, func(a, b Diagnostic) int {
		if a.Range.Start.Line != b.Range.Start.Line {
			return a.Range.Start.Line - b.Range.Start.Line
		}
		return a.Range.Start.Character - b.Range.Start.Character
	})
	var out []string
	for i, d := range ds {
		if i == limit {
			out = append(out, fmt.Sprintf("%s: %d more not shown", rel, len(ds)-limit))
			break
		}
		out = append(out, formatDiagnostic(rel, server, d))
	}
	return out
}

func formatDiagnostic(rel, server string, d Diagnostic) string {
	source := oneLine(d.Source)
	if source == "" {
		source = server
	}
	return fmt.Sprintf("%s:%d:%d %s %s (%s)", noControls(rel), d.Range.Start.Line+1, d.Range.Start.Character+1,
		d.Severity, oneLine(d.Message), source)
}

// noControls keeps a path from a server's URI on one line.
func noControls(s string) string {
	return strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return '?'
		}
		return r
	}, s)
}

// oneLine joins a multi-line message (pyright and tsc explain on
// further lines) into one.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// display is a path as the model wrote it: relative to the working
// directory when under it.
func (m *Manager) display(path string) string {
	if rel, err := filepath.Rel(m.opts.WorkDir, path); err == nil && !strings.HasPrefix(rel, "..") {
		return filepath.ToSlash(rel)
	}
	return path
}
