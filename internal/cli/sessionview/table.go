package sessionview

import "unicode/utf8"

// tableWidth is the width the tables of the command line fit: a terminal
// split in two still shows them unwrapped.
const tableWidth = 100

// tableGap is the space between two columns.
const tableGap = 2

// fitColumn is a column fitTable may shorten, down to min characters.
type fitColumn struct{ col, min int }

// fitTable shortens the cells of cols, in that order, with "…" until the
// rows (the first is the header, never shortened) fit width columns.
func fitTable(rows [][]string, width int, cols []fitColumn) {
	for _, c := range cols {
		over := rowsWidth(rows) - width
		if over <= 0 {
			return
		}
		limit := max(columnWidth(rows, c.col)-over, c.min)
		if len(rows) > 0 && c.col < len(rows[0]) {
			limit = max(limit, utf8.RuneCountInString(rows[0][c.col]))
		}
		for _, r := range rows[1:] {
			if c.col < len(r) {
				r[c.col] = truncateRunes(r[c.col], limit)
			}
		}
	}
}

// rowsWidth is the width of the rows laid out as columns.
func rowsWidth(rows [][]string) int {
	cols := 0
	for _, r := range rows {
		cols = max(cols, len(r))
	}
	w := 0
	for c := range cols {
		w += columnWidth(rows, c)
	}
	return w + tableGap*max(cols-1, 0)
}

func columnWidth(rows [][]string, col int) int {
	w := 0
	for _, r := range rows {
		if col < len(r) {
			w = max(w, utf8.RuneCountInString(r[col]))
		}
	}
	return w
}

// truncateRunes shortens s to n characters, the last one "…".
func truncateRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:max(n-1, 0)]) + "…"
}
