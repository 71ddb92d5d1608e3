package termmd

import (
	"slices"
	"strings"

	"github.com/charmbracelet/x/ansi"
	east "github.com/yuin/goldmark/extension/ast"
)

// colGap separates table columns.
const colGap = " │ "

// table renders a GitHub table: a bold header, a rule, the rows. When the
// columns' natural widths do not fit, the widest columns shrink and their
// cells wrap, so every word stays on the screen; when not even that fits
// (many columns on a narrow screen), each row is shown as a record.
func (r *renderer) table(t *node, width int) []string {
	var rows [][]string
	header := -1
	for row := t.firstChild; row != nil; row = row.next {
		var style []string
		if row.header {
			header, style = len(rows), []string{"1"}
		}
		var cells []string
		for c := row.firstChild; c != nil; c = c.next {
			cells = append(cells, r.inline(c, "", style...))
		}
		rows = append(rows, cells)
	}
	var widths []int // the widest line of each column's cells
	for _, row := range rows {
		for i, c := range row {
			if i == len(widths) {
				widths = append(widths, 0)
			}
			for l := range strings.SplitSeq(c, "\n") {
				widths[i] = max(widths[i], ansi.StringWidth(l))
			}
		}
	}
	cols := len(widths)
	if cols == 0 {
		return nil
	}
	room := width - len([]rune(colGap))*(cols-1)
	narrowest := 0
	for _, w := range widths {
		narrowest += min(w, 3)
	}
	if narrowest > room {
		return r.tableRecords(rows, header, width)
	}
	fit(widths, room)

	var out []string
	for ri, row := range rows {
		cellLines := make([][]string, cols)
		height := 1
		for i := range cols {
			if i < len(row) {
				cellLines[i] = wrap(row[i], max(widths[i], 1))
			}
			height = max(height, len(cellLines[i]))
		}
		for h := range height {
			var b strings.Builder
			for i := range cols {
				if i > 0 {
					b.WriteString(sgr(r.pal.rule, colGap))
				}
				cell := ""
				if h < len(cellLines[i]) {
					cell = cellLines[i][h]
				}
				b.WriteString(align(cell, widths[i], t.aligns, i))
			}
			out = append(out, strings.TrimRight(b.String(), " "))
		}
		if ri == header {
			parts := make([]string, cols)
			for i, w := range widths {
				parts[i] = strings.Repeat("─", w)
			}
			out = append(out, sgr(r.pal.rule, strings.Join(parts, "─┼─")))
		}
	}
	return out
}

// fit shrinks the widest columns until their sum is at most room; no
// column gets narrower than 3 cells (or its natural width).
func fit(widths []int, room int) {
	total := 0
	for _, w := range widths {
		total += w
	}
	for total > room {
		widest := slices.Index(widths, slices.Max(widths))
		if widths[widest] <= 3 {
			return // nothing sensible fits; lines will be wider
		}
		widths[widest]--
		total--
	}
}

// align pads a styled cell of column col to width cells.
func align(cell string, width int, aligns []east.Alignment, col int) string {
	gap := max(width-ansi.StringWidth(cell), 0)
	switch {
	case col >= len(aligns):
	case aligns[col] == east.AlignRight:
		return strings.Repeat(" ", gap) + cell
	case aligns[col] == east.AlignCenter:
		return strings.Repeat(" ", gap/2) + cell + strings.Repeat(" ", gap-gap/2)
	}
	return cell + strings.Repeat(" ", gap)
}

// tableRecords shows a table too wide for the screen as one record per
// row: each cell on its own line after its column's header, the records
// separated by blank lines.
func (r *renderer) tableRecords(rows [][]string, header, width int) []string {
	var out []string
	for ri, row := range rows {
		if ri == header && len(rows) > 1 {
			continue
		}
		if len(out) > 0 {
			out = append(out, "")
		}
		for i, cell := range row {
			label := ""
			if header >= 0 && ri != header && i < len(rows[header]) && rows[header][i] != "" {
				label = rows[header][i] + ": "
			}
			out = append(out, wrap(label+cell, width)...)
		}
	}
	return out
}
