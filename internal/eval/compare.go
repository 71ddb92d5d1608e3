package eval

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// Comparison sets two reports side by side, task by task.
type Comparison struct {
	Rows []CompareRow
}

// CompareRow is one task in one or both reports.
type CompareRow struct {
	Task          string
	Before, After *TaskResult // nil when the task is missing from that report
}

// Compare matches the tasks of two reports by name, in the order of
// before, then the tasks only after has.
func Compare(before, after *Report) *Comparison {
	c := &Comparison{}
	index := map[string]int{}
	for i := range before.Tasks {
		index[before.Tasks[i].Name] = len(c.Rows)
		c.Rows = append(c.Rows, CompareRow{Task: before.Tasks[i].Name, Before: &before.Tasks[i]})
	}
	for i := range after.Tasks {
		if j, ok := index[after.Tasks[i].Name]; ok {
			c.Rows[j].After = &after.Tasks[i]
			continue
		}
		c.Rows = append(c.Rows, CompareRow{Task: after.Tasks[i].Name, After: &after.Tasks[i]})
	}
	return c
}

// WriteTable writes one row per task (pass rate, mean tokens, mean time
// and mean requests, before → after with the change) and a summary over
// the tasks both reports have.
func (c *Comparison) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TASK\tPASS RATE\tTOKENS\tTIME\tREQUESTS")
	var sum [2]struct{ passed, runs, tokens, ms float64 }
	common := 0
	for _, r := range c.Rows {
		switch {
		case r.Before == nil:
			fmt.Fprintf(tw, "%s\tnew: %s\t%s\t%s\t%s\n", r.Task, pct(r.After.PassRate), formatCount(int64(r.After.Tokens.Mean)), formatMs(int64(r.After.WallMs.Mean)), trimFloat(r.After.Requests.Mean))
			continue
		case r.After == nil:
			fmt.Fprintf(tw, "%s\tgone (was %s)\t\t\t\n", r.Task, pct(r.Before.PassRate))
			continue
		}
		common++
		b, a := r.Before, r.After
		for i, t := range []*TaskResult{b, a} {
			sum[i].passed += float64(t.Passed)
			sum[i].runs += float64(t.Count)
			sum[i].tokens += t.Tokens.Mean
			sum[i].ms += t.WallMs.Mean
		}
		fmt.Fprintf(tw, "%s\t%s → %s%s\t%s → %s%s\t%s → %s%s\t%s → %s\n", r.Task,
			pct(b.PassRate), pct(a.PassRate), points(b.PassRate, a.PassRate),
			formatCount(int64(b.Tokens.Mean)), formatCount(int64(a.Tokens.Mean)), change(b.Tokens.Mean, a.Tokens.Mean),
			formatMs(int64(b.WallMs.Mean)), formatMs(int64(a.WallMs.Mean)), change(b.WallMs.Mean, a.WallMs.Mean),
			trimFloat(b.Requests.Mean), trimFloat(a.Requests.Mean))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if common == 0 {
		_, err := fmt.Fprintln(w, "no task is in both reports")
		return err
	}
	rb, ra := sum[0].passed/sum[0].runs, sum[1].passed/sum[1].runs
	_, err := fmt.Fprintf(w, "%d tasks in both: pass rate %s → %s%s, tokens %s → %s%s, time %s → %s%s\n", common,
		pct(rb), pct(ra), points(rb, ra),
		formatCount(int64(sum[0].tokens)), formatCount(int64(sum[1].tokens)), change(sum[0].tokens, sum[1].tokens),
		formatMs(int64(sum[0].ms)), formatMs(int64(sum[1].ms)), change(sum[0].ms, sum[1].ms))
	return err
}

func pct(rate float64) string { return fmt.Sprintf("%.0f%%", 100*rate) }

// points is the change of a rate in percentage points, or "".
func points(before, after float64) string {
	d := 100 * (after - before)
	if d > -0.5 && d < 0.5 {
		return ""
	}
	return fmt.Sprintf(" (%+.0f)", d)
}

// change is the relative change of a figure, or "" when there is none.
func change(before, after float64) string {
	switch {
	case before == after:
		return ""
	case before == 0:
		return " (new)"
	}
	d := 100 * (after - before) / before
	if d > -0.5 && d < 0.5 {
		return ""
	}
	return fmt.Sprintf(" (%+.0f%%)", d)
}
