package termmd

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
	east "github.com/yuin/goldmark/extension/ast"
)

// colGap separates table columns.
const colGap = " │ "

// table renders a GitHub table: a bold header, a rule, the rows. When the
// columns' natural widths do not fit, the widest columns shrink and their
// cells wrap, so every word stays on the screen.
func (r *renderer) table(t *east.Table, width int) []string {
	var rows [][]string
	header := -1
	for row := t.FirstChild(); row != nil; row = row.NextSibling() {
		var cells []string
		for c := row.FirstChild(); c != nil; c = c.NextSibling() {
			style := []string{}
			if _, ok := row.(*east.TableHeader); ok {
				style = []string{"1"}
			}
			cells = append(cells, r.inline(c, style...))
		}
		if _, ok := row.(*east.TableHeader); ok {
			header = len(rows)
		}
		rows = append(rows, cells)
	}
	cols := 0
	for _, row := range rows {
		cols = max(cols, len(row))
	}
	if cols == 0 {
		return nil
	}
	widths := make([]int, cols)
	for _, row := range rows {
		for i, c := range row {
			for _, l := range strings.Split(c, "\n") {
				widths[i] = max(widths[i], ansi.StringWidth(l))
			}
		}
	}
	fit(widths, width-len([]rune(colGap))*(cols-1))

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
				b.WriteString(align(cell, widths[i], alignment(t, i)))
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
		widest := 0
		for i, w := range widths {
			if w > widths[widest] {
				widest = i
			}
		}
		if widths[widest] <= 3 {
			return // nothing sensible fits; lines will be wider
		}
		widths[widest]--
		total--
	}
}

func alignment(t *east.Table, col int) east.Alignment {
	if col < len(t.Alignments) {
		return t.Alignments[col]
	}
	return east.AlignNone
}

// align pads a styled cell to width cells.
func align(cell string, width int, a east.Alignment) string {
	gap := max(width-ansi.StringWidth(cell), 0)
	switch a {
	case east.AlignRight:
		return strings.Repeat(" ", gap) + cell
	case east.AlignCenter:
		return strings.Repeat(" ", gap/2) + cell + strings.Repeat(" ", gap-gap/2)
	}
	return cell + strings.Repeat(" ", gap)
}
