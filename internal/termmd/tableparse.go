package termmd

import "strings"

// GitHub tables: a header row, a delimiter row ("|---|:--:|") with as
// many cells, then rows until a blank line or another block. A row with
// fewer cells gets empty ones, the cells beyond the header's are dropped.

// startTable turns the last line of para into a table's header when the
// line being added is a delimiter row with as many cells; the lines
// before it stay a paragraph.
func (p *blockParser) startTable(para *node) bool {
	if len(para.lines) == 0 {
		return false
	}
	delimiter := p.rest()
	if strings.Trim(delimiter, " \t|:-") != "" || !strings.Contains(delimiter, "-") {
		return false // most paragraph lines: no need to split them
	}
	aligns := parseDelimiterRow(delimiter)
	if aligns == nil {
		return false
	}
	headerLine := para.lines[len(para.lines)-1]
	header := splitTableRow(headerLine)
	if len(header) != len(aligns) || !strings.Contains(headerLine, "|") && !strings.Contains(delimiter, "|") {
		return false
	}
	parent := para.parent
	para.lines = para.lines[:len(para.lines)-1]
	if len(para.lines) == 0 {
		para.unlink()
	} else {
		p.finalize(para)
	}
	table := &node{kind: kindTable, blockState: &blockState{aligns: aligns, open: true, startLine: para.endLine}}
	parent.appendChild(table)
	p.tip = table
	p.addTableRow(table, headerLine).header = true
	return true
}

// addTableRow appends the row of cells in line to table.
func (p *blockParser) addTableRow(table *node, line string) *node {
	cells := splitTableRow(line)
	row := &node{kind: kindTableRow, blockState: &blockState{}}
	for i := range table.aligns {
		cell := &node{kind: kindTableCell}
		if i < len(cells) {
			cell.literal = cells[i]
		}
		row.appendChild(cell)
	}
	table.appendChild(row)
	return row
}

// parseDelimiterRow returns the alignment of each cell of a delimiter
// row, or nil if s is not one.
func parseDelimiterRow(s string) []alignment {
	cells := splitTableRow(s)
	aligns := make([]alignment, len(cells))
	for i, c := range cells {
		left, right := strings.HasPrefix(c, ":"), strings.HasSuffix(c, ":")
		dashes := strings.TrimSuffix(strings.TrimPrefix(c, ":"), ":")
		if dashes == "" || strings.Trim(dashes, "-") != "" {
			return nil
		}
		switch {
		case left && right:
			aligns[i] = alignCenter
		case left:
			aligns[i] = alignLeft
		case right:
			aligns[i] = alignRight
		}
	}
	return aligns
}

// splitTableRow splits a row at its unescaped pipes; the outer pipes are
// optional. "\|" is a pipe inside a cell, in code spans too (that is how
// GitHub lets a cell hold one); other escapes are left to the inline
// parser.
func splitTableRow(s string) []string {
	s = strings.Trim(s, " \t")
	s = strings.TrimPrefix(s, "|")
	var cells []string
	var cell strings.Builder
	endsWithPipe := false
	for i := 0; i < len(s); i++ {
		endsWithPipe = false
		switch c := s[i]; {
		case c == '\\' && i+1 < len(s):
			if s[i+1] == '|' {
				cell.WriteByte('|')
			} else {
				cell.WriteString(s[i : i+2])
			}
			i++
		case c == '|':
			cells = append(cells, strings.Trim(cell.String(), " \t"))
			cell.Reset()
			endsWithPipe = true
		default:
			cell.WriteByte(c)
		}
	}
	if !endsWithPipe {
		cells = append(cells, strings.Trim(cell.String(), " \t"))
	}
	return cells
}
