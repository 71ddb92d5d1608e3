package termmd

import "strings"

// takeLinkDefinitions removes the link reference definitions
// ("[label]: destination "title"") that start a paragraph, records them
// (the first definition of a label wins) and returns the lines left.
func (p *blockParser) takeLinkDefinitions(lines []string) []string {
	if len(lines) == 0 || !strings.HasPrefix(lines[0], "[") {
		return lines
	}
	text := strings.Join(lines, "\n")
	pos := 0
	for pos < len(text) && text[pos] == '[' {
		n, label, dest := parseLinkDefinition(text[pos:])
		if n == 0 {
			break
		}
		if p.refs == nil {
			p.refs = map[string]string{}
		}
		if _, ok := p.refs[label]; !ok {
			p.refs[label] = dest
		}
		pos += n
	}
	switch pos {
	case 0:
		return lines
	case len(text):
		return nil
	}
	return lines[strings.Count(text[:pos], "\n"):]
}

// parseLinkDefinition reads a definition at the start of s and returns
// its length (up to and including its line end), its normalised label
// and its destination; the length is 0 if s does not start with one.
func parseLinkDefinition(s string) (n int, label, dest string) {
	labelEnd := scanLinkLabel(s, 0)
	if labelEnd < 0 || labelEnd >= len(s) || s[labelEnd] != ':' {
		return 0, "", ""
	}
	label = normalizeLabel(s[1 : labelEnd-1])
	if label == "" {
		return 0, "", ""
	}
	i := skipLinkSpace(s, labelEnd+1)
	if i < len(s) && s[i] != '<' && (s[i] <= ' ' || s[i] == 0x7f) {
		return 0, "", "" // an empty destination must be written "<>"
	}
	dest, destEnd, ok := scanLinkDestination(s, i)
	if !ok || destEnd == i {
		return 0, "", ""
	}
	find := func(from int, c byte) int { return indexByteFrom(s, from, c) }
	// A title, after whitespace, with nothing but spaces after it on its
	// line; without one, nothing but spaces may follow the destination.
	if t := skipLinkSpace(s, destEnd); t > destEnd && t < len(s) {
		if titleEnd := scanLinkTitle(s, t, find); titleEnd > 0 {
			if end, ok := lineEndAfterSpaces(s, titleEnd); ok {
				return end, label, dest
			}
		}
	}
	if end, ok := lineEndAfterSpaces(s, destEnd); ok {
		return end, label, dest
	}
	return 0, "", ""
}

// lineEndAfterSpaces returns the index after the line end that follows
// s[i:] if only spaces and tabs come before it.
func lineEndAfterSpaces(s string, i int) (int, bool) {
	for ; i < len(s); i++ {
		switch s[i] {
		case ' ', '\t':
		case '\n':
			return i + 1, true
		default:
			return 0, false
		}
	}
	return i, true
}
