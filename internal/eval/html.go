package eval

import (
	"fmt"
	"html/template"
	"io"
	"strings"
)

// htmlRow is one task of the HTML report, with its bar widths (percent of
// the largest figure in the report).
type htmlRow struct {
	Name, Result, Class, Time, Tokens, Requests, Tools, Reason string
	Cost, ToolErrors, Compactions, Aborts, Retries             string
	TimePct                                                    float64
	InPct, CacheReadPct, CacheWritePct, OutPct                 float64
	TokensTitle                                                string
}

type htmlPage struct {
	Title, Summary, Mode, Started, Model string
	Rows                                 []htmlRow
	Notes                                bool // some run has a reason to show
}

// htmlPage is parsed when a report is written, not at package init: every
// tiny-go start would pay for it.
const htmlReportTemplate = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 2em; color: #1d2330; background: #fff; }
h1 { font-size: 20px; margin: 0 0 .2em; }
p.meta { color: #5b6474; margin: 0 0 1.2em; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 6px 8px; border-bottom: 1px solid #e3e6ec; vertical-align: middle; white-space: nowrap; }
th { font-weight: 600; color: #5b6474; font-size: 12px; text-transform: uppercase; letter-spacing: .04em; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.pass { color: #11734b; font-weight: 600; }
.fail { color: #b42318; font-weight: 600; }
.bar { display: flex; height: 12px; width: 160px; background: #f1f3f7; border-radius: 3px; overflow: hidden; }
.bar span { display: block; height: 100%; }
.time { background: #4f6bed; }
.in { background: #7a8cff; } .cr { background: #43b581; } .cw { background: #f0b429; } .out { background: #e5484d; }
.legend span { display: inline-block; width: 10px; height: 10px; margin: 0 4px 0 12px; border-radius: 2px; }
td.reason { color: #5b6474; font-size: 12px; min-width: 240px; white-space: normal; }
</style>
</head>
<body>
<h1>{{.Title}}</h1>
<p class="meta">{{.Summary}} · {{.Mode}} · started {{.Started}}{{if .Model}} · model {{.Model}}{{end}}</p>
<p class="legend">Tokens:<span class="in"></span>input<span class="cr"></span>cache read<span class="cw"></span>cache write<span class="out"></span>output</p>
<table>
<thead><tr><th>Task</th><th>Result</th><th>Time</th><th></th><th>Tokens</th><th></th><th>Cost</th><th>Requests</th><th>Tools</th><th>Tool err</th><th>Compact</th><th>Abort</th><th>Retry</th>{{if .Notes}}<th>Note</th>{{end}}</tr></thead>
<tbody>
{{range .Rows}}<tr>
<td>{{.Name}}</td>
<td class="{{.Class}}">{{.Result}}</td>
<td class="num">{{.Time}}</td>
<td><div class="bar"><span class="time" style="width: {{printf "%.1f" .TimePct}}%"></span></div></td>
<td class="num">{{.Tokens}}</td>
<td><div class="bar" title="{{.TokensTitle}}"><span class="in" style="width: {{printf "%.1f" .InPct}}%"></span><span class="cr" style="width: {{printf "%.1f" .CacheReadPct}}%"></span><span class="cw" style="width: {{printf "%.1f" .CacheWritePct}}%"></span><span class="out" style="width: {{printf "%.1f" .OutPct}}%"></span></div></td>
<td class="num">{{.Cost}}</td>
<td class="num">{{.Requests}}</td>
<td>{{.Tools}}</td>
<td class="num">{{.ToolErrors}}</td>
<td class="num">{{.Compactions}}</td>
<td class="num">{{.Aborts}}</td>
<td class="num">{{.Retries}}</td>
{{if $.Notes}}<td class="reason">{{.Reason}}</td>{{end}}
</tr>
{{end}}</tbody>
</table>
</body>
</html>
`

// WriteHTML writes the report as one self-contained page: no scripts, no
// fonts or styles from the network.
func (r *Report) WriteHTML(w io.Writer) error {
	passed, runs := r.Passed()
	page := htmlPage{
		Title:   "tiny-go eval",
		Summary: strings.TrimSpace(pct(safeRate(passed, runs))) + " passed (" + itoa(passed) + "/" + itoa(runs) + ") in " + formatMs(r.WallMs),
		Mode:    r.Mode,
		Started: r.Started,
		Model:   r.Model,
	}
	var maxMs, maxTok float64
	for _, t := range r.Tasks {
		maxMs = max(maxMs, t.WallMs.Mean)
		maxTok = max(maxTok, t.Tokens.Mean)
	}
	share := func(v, of float64) float64 {
		if of <= 0 {
			return 0
		}
		return 100 * v / of
	}
	for _, t := range r.Tasks {
		m := meanMetrics(t.Runs)
		row := htmlRow{
			Name:          t.Name,
			Result:        strings.ToUpper(t.Runs[0].Status),
			Class:         "fail",
			Time:          formatMs(int64(t.WallMs.Mean)),
			Tokens:        formatCount(int64(t.Tokens.Mean)),
			Requests:      trimFloat(t.Requests.Mean),
			Tools:         toolSummary(m.ToolCalls),
			Cost:          formatCost(m.cost),
			ToolErrors:    trimFloat(m.toolErrors),
			Compactions:   trimFloat(m.compactions),
			Aborts:        trimFloat(m.aborts),
			Retries:       trimFloat(m.retries),
			TimePct:       share(t.WallMs.Mean, maxMs),
			InPct:         share(float64(m.Tokens.Input), maxTok),
			CacheReadPct:  share(float64(m.Tokens.CacheRead), maxTok),
			CacheWritePct: share(float64(m.Tokens.CacheWrite), maxTok),
			OutPct:        share(float64(m.Tokens.Output), maxTok),
			TokensTitle: "input " + formatCount(m.Tokens.Input) + ", cache read " + formatCount(m.Tokens.CacheRead) +
				", cache write " + formatCount(m.Tokens.CacheWrite) + ", output " + formatCount(m.Tokens.Output),
		}
		if t.Passed == t.Count {
			row.Class = "pass"
		}
		if t.Count > 1 {
			row.Result = itoa(t.Passed) + "/" + itoa(t.Count)
			row.Time += " ±" + formatMs(int64(t.WallMs.StdDev))
		}
		var reasons []string
		for _, run := range t.Runs {
			if run.Reason != "" {
				reasons = append(reasons, run.Reason)
			}
		}
		row.Reason = strings.Join(reasons, "; ")
		page.Notes = page.Notes || row.Reason != ""
		page.Rows = append(page.Rows, row)
	}
	tmpl, err := template.New("report").Parse(htmlReportTemplate)
	if err != nil {
		return fmt.Errorf("report template: %w", err)
	}
	return tmpl.Execute(w, page)
}

func safeRate(passed, runs int) float64 {
	if runs == 0 {
		return 0
	}
	return float64(passed) / float64(runs)
}

func itoa(n int) string { return trimFloat(float64(n)) }
