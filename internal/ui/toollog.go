package ui

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"charm.land/lipgloss/v2"
	"github.com/aymanbagabas/go-udiff"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/session"
	"github.com/tiny-agent/tiny-go/internal/tools"
)

// The tool log, the same in every mode:
//
//	◆ edit main.go
//	  └ ok +2 -1 · 1.4s
//	    @@ -10,3 +10,4 @@
//	    -	return nil
//	    +	return err
//
// A failed call says why (the error's first line), a successful one shows
// a dimmed preview of its result (first and last lines), a write or edit
// its unified diff; interrupted and denied calls are named as such, and a
// call that took a second or more says how long.

// Limits of the detail under a result line.
const (
	previewHead = 2  // first lines of a result preview
	previewTail = 2  // last lines
	diffLimit   = 40 // lines of a diff
)

// toolLog remembers, for each write or edit call that starts, the change
// it is about to make, so that its diff can be shown once it succeeds.
// started is called before the call's effect begins (the agent delivers
// ToolStarted first), so the file is read as it was.
type toolLog struct {
	workDir string
	mu      sync.Mutex
	changes map[string]tools.FileChange // by execution id
	// asked is set when the approval question of the next call showed its
	// diff; that call's result line then gives only the counts.
	asked bool
	shown map[string]bool // by execution id: diff already in the question
}

// shownInQuestion notes that the call about to start had its diff shown
// in its approval question (calls start one at a time, right after their
// question is answered).
func (l *toolLog) shownInQuestion() {
	l.mu.Lock()
	l.asked = true
	l.mu.Unlock()
}

func (l *toolLog) started(t agent.ToolInfo) {
	if l == nil {
		return
	}
	l.mu.Lock()
	asked := l.asked
	l.asked = false
	l.mu.Unlock()
	if t.Tool != "write" && t.Tool != "edit" {
		return
	}
	change, err := tools.PreviewChange(l.workDir, t.Tool, jsontext.Value(t.Arguments))
	if err != nil {
		return // the call will fail and say why
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.changes == nil {
		l.changes, l.shown = map[string]tools.FileChange{}, map[string]bool{}
	}
	l.changes[t.ExecutionID] = change
	if asked {
		l.shown[t.ExecutionID] = true
	}
}

// report is the result line and its detail for a call that ended.
func (l *toolLog) report(t agent.ToolInfo, o agent.ToolOutcome) toolReport {
	var change *tools.FileChange
	shown := false
	if l != nil {
		l.mu.Lock()
		if c, ok := l.changes[t.ExecutionID]; ok {
			change = &c
			delete(l.changes, t.ExecutionID)
		}
		shown = l.shown[t.ExecutionID]
		delete(l.shown, t.ExecutionID)
		l.mu.Unlock()
	}
	r := buildReport(t, o, change)
	if tr, ok := todoReport(t, o); ok {
		r = tr
	}
	if shown {
		r.diff, r.more = nil, 0 // the approval question showed it
	}
	return r
}

// reportKind decides the result line's colour.
type reportKind int

const (
	reportOK reportKind = iota
	reportFailed
	reportStopped // interrupted or denied: the call did not (fully) run
)

// toolReport is what the tool log shows when a call ends.
type toolReport struct {
	kind    reportKind
	summary string   // after "  └ "
	preview []string // dimmed result lines
	diff    []string // unified diff lines, without the file header
	more    int      // detail lines left out
	earlier int      // lines left out before a preview that is a tail
}

var exitCodeRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\n*Command exited with code (-?\d+)\s*$`) })

func buildReport(t agent.ToolInfo, o agent.ToolOutcome, change *tools.FileChange) toolReport {
	content := sanitize(o.Content)
	var r toolReport
	denied := agent.DeniedContent("")
	switch {
	case o.Outcome == "cancelled" && (o.Partial != "" || o.Duration > 0):
		// The model gets the contract's fixed text; the user sees what
		// happened to their command and what it had printed.
		r.kind, r.summary = reportStopped, "interrupted by you after "+seconds(o.Duration)
		r.preview, r.earlier = partialTail(o.Partial)
		o.Duration = 0
	case content == session.ContentAborted:
		r.kind, r.summary = reportStopped, "interrupted before it started"
	case content == session.ContentInterrupted, o.Outcome == "cancelled":
		r.kind, r.summary = reportStopped, "interrupted while running"
	case strings.HasPrefix(content, denied):
		r.kind, r.summary = reportStopped, "denied"
		if reason, ok := strings.CutPrefix(content, denied+"\nReason given by the user: "); ok {
			r.summary += ": " + sanitizeLine(reason)
		}
	case strings.HasPrefix(content, hookBlocked):
		r = hookBlockedReport(content)
	case strings.Contains(content, tools.ReviewRejected):
		r = reviewRejectedReport(content)
	case o.Outcome != "succeeded":
		r.kind = reportFailed
		if m := exitCodeRE().FindStringSubmatch(content); m != nil && t.Tool == "bash" {
			r.summary = "exit code " + m[1]
			r.preview, r.more = preview(strings.TrimSuffix(content, m[0]))
		} else {
			r.summary = "error: " + strings.TrimPrefix(firstLine(content), "Error: ")
		}
	case content == "(no output)":
		r.summary = "(no output)"
	case t.Tool == "write" || t.Tool == "edit":
		r.summary = "ok"
		if change != nil {
			var add, del int
			r.diff, add, del = diffOf(*change)
			r.summary = fmt.Sprintf("ok +%d -%d", add, del)
			if len(r.diff) > diffLimit {
				r.more = len(r.diff) - diffLimit
				r.diff = r.diff[:diffLimit]
			}
		}
	default:
		r.summary = fmt.Sprintf("%d chars", utf8.RuneCountInString(o.Content))
		r.preview, r.more = preview(content)
	}
	if o.Duration >= time.Second {
		r.summary += " · " + o.Duration.Round(100*time.Millisecond).String()
	}
	return r
}

// seconds is a duration as a person says it: "3 s", "0.4 s", "2m10s".
func seconds(d time.Duration) string {
	switch {
	case d < time.Second:
		return fmt.Sprintf("%.1f s", d.Seconds())
	case d < time.Minute:
		return fmt.Sprintf("%d s", int(d.Round(time.Second).Seconds()))
	}
	return d.Round(time.Second).String()
}

// fullOutputRE finds where bash kept the full output of a cut result.
var fullOutputRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\n*\[Showing lines \d+-\d+ of \d+\. (?:Full output|Captured output[^:]*): ([^\]]+)\]`)
})

// partialTail is the last lines an interrupted call printed (and how many
// came before them), and where its full output was kept when it was cut.
func partialTail(s string) ([]string, int) {
	s = strings.TrimSuffix(sanitize(s), "\n\nCommand aborted.")
	where := ""
	if m := fullOutputRE().FindStringSubmatchIndex(s); m != nil {
		where = s[m[2]:m[3]]
		s = s[:m[0]] + s[m[1]:]
	}
	var lines []string
	if s = strings.Trim(s, "\n"); s != "" && s != "(no output)" {
		lines = strings.Split(s, "\n")
	}
	more := 0
	if n := previewHead + previewTail; len(lines) > n {
		more, lines = len(lines)-n, lines[len(lines)-n:]
	}
	if where != "" {
		lines = append(lines, "full output: "+where)
	}
	return lines, more
}

func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return sanitizeLine(l)
		}
	}
	return "(no message)"
}

// preview is the first and last lines of a result, and how many lines
// are left out between them.
func preview(s string) ([]string, int) {
	lines := strings.Split(strings.Trim(s, "\n"), "\n")
	if len(lines) == 1 && strings.TrimSpace(lines[0]) == "" {
		return nil, 0
	}
	if len(lines) <= previewHead+previewTail+1 {
		return lines, 0
	}
	out := append(append([]string{}, lines[:previewHead]...), lines[len(lines)-previewTail:]...)
	return out, len(lines) - len(out)
}

// diffOf is a change's unified diff (hunks only) and its added and
// removed line counts.
func diffOf(c tools.FileChange) (lines []string, add, del int) {
	d := udiff.Unified("a", "b", c.Old, c.New)
	for _, l := range strings.Split(strings.TrimSuffix(d, "\n"), "\n") {
		switch {
		case l == "", strings.HasPrefix(l, "--- "), strings.HasPrefix(l, "+++ "), strings.HasPrefix(l, `\ No newline`):
			continue
		case strings.HasPrefix(l, "+"):
			add++
		case strings.HasPrefix(l, "-"):
			del++
		}
		lines = append(lines, l)
	}
	return lines, add, del
}

// logStyles colour the tool log; the zero value is plain text.
type logStyles struct {
	tool, failed, stopped, dim, add, del, hunk lipgloss.Style
	addEm, delEm                               lipgloss.Style // the changed words of a changed line
}

// changedSpans finds, for each removed line that is paired with an added
// one (a run of n "-" lines followed by n "+" lines), the rune span of
// each that differs from the other: what to emphasize so that the changed
// words stand out. shown are the lines as displayed (indented, cut).
func changedSpans(diff, shown []string) map[int][2]int {
	out := map[int][2]int{}
	for i := 0; i < len(diff); {
		if !strings.HasPrefix(diff[i], "-") {
			i++
			continue
		}
		j := i
		for j < len(diff) && strings.HasPrefix(diff[j], "-") {
			j++
		}
		k := j
		for k < len(diff) && strings.HasPrefix(diff[k], "+") {
			k++
		}
		if n := j - i; n == k-j {
			for m := 0; m < n; m++ {
				a, b := []rune(shown[i+m]), []rune(shown[j+m])
				const head = 5 // "    -": indent and sign
				if len(a) < head || len(b) < head {
					continue
				}
				p := head
				for p < len(a) && p < len(b) && a[p] == b[p] {
					p++
				}
				q := 0
				for q < len(a)-p && q < len(b)-p && a[len(a)-1-q] == b[len(b)-1-q] {
					q++
				}
				if p-head+q == 0 {
					continue // nothing in common: the whole line changed
				}
				out[i+m] = [2]int{p, len(a) - q}
				out[j+m] = [2]int{p, len(b) - q}
			}
		}
		i = k
	}
	return out
}

func plainStyles() logStyles { return logStyles{} }

func colorStyles() logStyles {
	return logStyles{
		tool:    toolStyle,
		failed:  errStyle,
		stopped: lipgloss.NewStyle().Foreground(lipgloss.Color("3")),
		dim:     faint,
		add:     lipgloss.NewStyle().Foreground(lipgloss.Color("2")),
		del:     lipgloss.NewStyle().Foreground(lipgloss.Color("1")),
		hunk:    lipgloss.NewStyle().Foreground(lipgloss.Color("6")),
		addEm:   lipgloss.NewStyle().Foreground(lipgloss.Color("2")).Reverse(true),
		delEm:   lipgloss.NewStyle().Foreground(lipgloss.Color("1")).Reverse(true),
	}
}

// lines renders the report for a terminal width cells wide (0: the
// default width); detail lines are cut, never wrapped.
func (r toolReport) lines(width int, st logStyles) []string {
	if width <= 0 {
		width = lineWidth
	}
	head := truncate("  └ "+r.summary, width)
	switch r.kind {
	case reportFailed:
		head = st.failed.Render(head)
	case reportStopped:
		head = st.stopped.Render(head)
	}
	out := []string{head}
	cut := func(l string) string {
		return truncate(strings.TrimRight("    "+strings.ReplaceAll(l, "\t", "    "), " \r"), width)
	}
	if r.earlier > 0 {
		out = append(out, st.dim.Render(cut(fmt.Sprintf("… %d earlier lines", r.earlier))))
	}
	for i, l := range r.preview {
		if r.more > 0 && i == previewHead {
			out = append(out, st.dim.Render(cut(fmt.Sprintf("… %d more lines", r.more))))
		}
		out = append(out, st.dim.Render(cut(l)))
	}
	cutDiff := make([]string, len(r.diff))
	for i, l := range r.diff {
		cutDiff[i] = cut(l)
	}
	changed := changedSpans(r.diff, cutDiff)
	for i, l := range r.diff {
		s := st.dim
		em := st.dim
		switch {
		case strings.HasPrefix(l, "@@"):
			s = st.hunk
		case strings.HasPrefix(l, "+"):
			s, em = st.add, st.addEm
		case strings.HasPrefix(l, "-"):
			s, em = st.del, st.delEm
		}
		if sp, ok := changed[i]; ok {
			rs := []rune(cutDiff[i])
			out = append(out, s.Render(string(rs[:sp[0]]))+em.Render(string(rs[sp[0]:sp[1]]))+s.Render(string(rs[sp[1]:])))
			continue
		}
		out = append(out, s.Render(cutDiff[i]))
	}
	if len(r.diff) > 0 && r.more > 0 {
		out = append(out, st.dim.Render(cut(fmt.Sprintf("… %d more lines", r.more))))
	}
	return out
}
