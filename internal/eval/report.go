package eval

import (
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// ReportVersion is the version of the --json format.
const ReportVersion = 1

// Report is the result of `tiny-go eval`, and its --json form.
type Report struct {
	Version     int          `json:"version"`
	Started     string       `json:"started"`
	WallMs      int64        `json:"wallMs"`
	Mode        string       `json:"mode"`
	Model       string       `json:"model,omitzero"`
	Repeat      int          `json:"repeat"`
	Parallel    int          `json:"parallel"`
	Interrupted bool         `json:"interrupted,omitzero"`
	Tasks       []TaskResult `json:"tasks"`
}

// TaskResult is every run of one task and their spread.
type TaskResult struct {
	Name     string      `json:"name"`
	Passed   int         `json:"passed"`
	Count    int         `json:"count"`
	PassRate float64     `json:"passRate"`
	WallMs   Stat        `json:"wallMs"`
	Tokens   Stat        `json:"tokens"`
	Requests Stat        `json:"requests"`
	Runs     []RunResult `json:"runs"`
}

// Stat is the spread of one figure over the runs of a task.
type Stat struct {
	Mean   float64 `json:"mean"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	StdDev float64 `json:"stddev"`
}

func stat(vs []float64) Stat {
	if len(vs) == 0 {
		return Stat{}
	}
	s := Stat{Min: vs[0], Max: vs[0]}
	var sum float64
	for _, v := range vs {
		sum += v
		s.Min, s.Max = min(s.Min, v), max(s.Max, v)
	}
	s.Mean = sum / float64(len(vs))
	if len(vs) > 1 {
		var sq float64
		for _, v := range vs {
			sq += (v - s.Mean) * (v - s.Mean)
		}
		s.StdDev = math.Sqrt(sq / float64(len(vs)-1))
	}
	return s
}

func summarize(name string, runs []RunResult) TaskResult {
	t := TaskResult{Name: name, Count: len(runs), Runs: runs}
	var wall, tok, req []float64
	for _, r := range runs {
		if r.Passed {
			t.Passed++
		}
		wall = append(wall, float64(r.WallMs))
		tok = append(tok, float64(r.Tokens.Total()))
		req = append(req, float64(r.Requests))
	}
	t.PassRate = float64(t.Passed) / float64(len(runs))
	t.WallMs, t.Tokens, t.Requests = stat(wall), stat(tok), stat(req)
	return t
}

// Passed counts passing runs over all tasks.
func (r *Report) Passed() (passed, runs int) {
	for _, t := range r.Tasks {
		passed += t.Passed
		runs += t.Count
	}
	return passed, runs
}

// AllPassed reports whether every run passed (and the eval finished).
func (r *Report) AllPassed() bool {
	p, n := r.Passed()
	return !r.Interrupted && p == n && n > 0
}

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	b, err := json.Marshal(r, jsontext.Multiline(true), jsontext.WithIndent("  "), json.Deterministic(true))
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// LoadReport reads a --json report.
func LoadReport(path string) (*Report, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Report
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if r.Version != ReportVersion {
		return nil, fmt.Errorf("%s: report version %d, want %d", path, r.Version, ReportVersion)
	}
	return &r, nil
}

// WriteTable writes the terminal table: one row per task (means over
// repeats, with the spread), the reasons of runs that did not pass, and a
// summary line.
func (r *Report) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TASK\tRESULT\tTIME\tREQ\tIN\tOUT\tCACHE R/W\tCOST\tTOOLS\tTOOL ERR\tCOMPACT\tABORT\tRETRY")
	for _, t := range r.Tasks {
		result := strings.ToUpper(t.Runs[0].Status)
		timeCol := formatMs(int64(t.WallMs.Mean))
		if t.Count > 1 {
			result = fmt.Sprintf("%d/%d", t.Passed, t.Count)
			timeCol += " ±" + formatMs(int64(t.WallMs.StdDev))
		}
		m := meanMetrics(t.Runs)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s/%s\t%s\t%s\t%s\t%s\t%s\t%s\n", t.Name, result, timeCol,
			trimFloat(t.Requests.Mean), formatCount(m.Tokens.Input), formatCount(m.Tokens.Output),
			formatCount(m.Tokens.CacheRead), formatCount(m.Tokens.CacheWrite), formatCost(m.cost), toolSummary(m.ToolCalls),
			trimFloat(m.toolErrors), trimFloat(m.compactions), trimFloat(m.aborts), trimFloat(m.retries))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, t := range r.Tasks {
		for _, run := range t.Runs {
			if run.Reason == "" {
				continue
			}
			name := run.Task
			if t.Count > 1 {
				name = fmt.Sprintf("%s #%d", run.Task, run.Rep)
			}
			fmt.Fprintf(w, "%s: %s\n", name, run.Reason)
		}
	}
	for _, t := range r.Tasks {
		for _, run := range t.Runs {
			if run.Dir != "" {
				fmt.Fprintf(w, "%s #%d kept in %s\n", run.Task, run.Rep, run.Dir)
			}
		}
	}
	passed, runs := r.Passed()
	pct := 0.0
	if runs > 0 {
		pct = 100 * float64(passed) / float64(runs)
	}
	line := fmt.Sprintf("%d/%d passed (%.0f%%) in %s, %s", passed, runs, pct, formatMs(r.WallMs), r.Mode)
	if r.Interrupted {
		line += ", interrupted"
	}
	_, err := fmt.Fprintln(w, line)
	return err
}

// meanRun is the mean of the per-run figures of a task.
type meanRun struct {
	Tokens                       Tokens
	ToolCalls                    map[string]float64
	toolErrors, cost             float64
	compactions, aborts, retries float64
}

func meanMetrics(runs []RunResult) meanRun {
	m := meanRun{ToolCalls: map[string]float64{}}
	n := float64(len(runs))
	var in, out, cr, cw float64
	for _, r := range runs {
		in += float64(r.Tokens.Input)
		out += float64(r.Tokens.Output)
		cr += float64(r.Tokens.CacheRead)
		cw += float64(r.Tokens.CacheWrite)
		for k, v := range r.ToolCalls {
			m.ToolCalls[k] += float64(v) / n
		}
		m.toolErrors += float64(r.ToolErrors) / n
		m.cost += r.CostUSD / n
		m.compactions += float64(r.Compactions) / n
		m.aborts += float64(r.Aborts) / n
		m.retries += float64(r.Retries) / n
	}
	m.Tokens = Tokens{int64(math.Round(in / n)), int64(math.Round(out / n)), int64(math.Round(cr / n)), int64(math.Round(cw / n))}
	return m
}

func toolSummary(calls map[string]float64) string {
	if len(calls) == 0 {
		return "-"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(calls)) {
		parts = append(parts, k+" "+trimFloat(calls[k]))
	}
	return strings.Join(parts, ", ")
}

// trimFloat prints a mean without needless decimals.
func trimFloat(v float64) string {
	if v == math.Trunc(v) {
		return fmt.Sprintf("%d", int64(v))
	}
	return fmt.Sprintf("%.1f", v)
}

func formatMs(ms int64) string {
	switch {
	case ms < 1000:
		return fmt.Sprintf("%dms", ms)
	case ms < 60_000:
		return fmt.Sprintf("%.1fs", float64(ms)/1000)
	}
	return fmt.Sprintf("%dm%02ds", ms/60_000, ms%60_000/1000)
}

// formatCost shows dollars with enough digits for a cheap request; "-"
// when no reply reported a cost.
func formatCost(usd float64) string {
	switch {
	case usd <= 0:
		return "-"
	case usd < 1:
		return fmt.Sprintf("$%.4f", usd)
	}
	return fmt.Sprintf("$%.2f", usd)
}

func formatCount(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d", n)
	case n < 1_000_000:
		return fmt.Sprintf("%.1fk", float64(n)/1000)
	}
	return fmt.Sprintf("%.1fM", float64(n)/1_000_000)
}
