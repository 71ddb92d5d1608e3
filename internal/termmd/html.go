package termmd

import "strings"

// HTML is not rendered: an HTML block is shown as its text, raw inline
// HTML as written. It is still recognised, as CommonMark says, so that
// the Markdown punctuation inside it stays as it is.

// htmlBlockKind is the kind (1-7, as the CommonMark spec numbers them) of
// HTML block the line s starts, or 0.
func htmlBlockKind(s string) int {
	if len(s) < 2 || s[0] != '<' {
		return 0
	}
	switch {
	case strings.HasPrefix(s, "<!--"):
		return 2
	case strings.HasPrefix(s, "<?"):
		return 3
	case strings.HasPrefix(s, "<![CDATA["):
		return 5
	case s[1] == '!' && len(s) > 2 && isASCIILetter(s[2]):
		return 4
	}
	closing := s[1] == '/'
	nameStart := 1
	if closing {
		nameStart = 2
	}
	nameEnd := nameStart
	for nameEnd < len(s) && (isASCIILetter(s[nameEnd]) || nameEnd > nameStart && (isASCIIDigit(s[nameEnd]) || s[nameEnd] == '-')) {
		nameEnd++
	}
	if nameEnd == nameStart {
		return 0
	}
	name := strings.ToLower(s[nameStart:nameEnd])
	after := byte(0)
	if nameEnd < len(s) {
		after = s[nameEnd]
	}
	if !closing && isRawTextTag(name) && (after == 0 || after == ' ' || after == '\t' || after == '>') {
		return 1
	}
	if isBlockTag(name) && (after == 0 || after == ' ' || after == '\t' || after == '>' || strings.HasPrefix(s[nameEnd:], "/>")) {
		return 6
	}
	if isRawTextTag(name) {
		return 0
	}
	end := 0
	if closing {
		end = scanClosingTag(s, 0)
	} else {
		end = scanOpenTag(s, 0, func(from int, c byte) int { return indexByteFrom(s, from, c) })
	}
	if end > 0 && strings.Trim(s[end:], " \t") == "" {
		return 7
	}
	return 0
}

// htmlBlockEnd is what ends an HTML block of kind 1-5 (the line that
// contains it is the block's last); kinds 6 and 7 end at a blank line.
func htmlBlockEnd(kind int, s string) (marker string, noCase bool) {
	switch kind {
	case 1:
		name := strings.ToLower(s[1:])
		for _, tag := range [...]string{"script", "pre", "style", "textarea"} {
			if strings.HasPrefix(name, tag) {
				return "</" + tag + ">", true
			}
		}
	case 2:
		return "-->", false
	case 3:
		return "?>", false
	case 4:
		return ">", false
	case 5:
		return "]]>", false
	}
	return "", false
}

// containsMarker looks for an HTML block's end marker in a line (the
// first line included: "<!-- note -->" is a block of one line).
func containsMarker(line, marker string, noCase bool) bool {
	if noCase {
		line = strings.ToLower(line)
	}
	return strings.Contains(line, marker)
}

func isRawTextTag(name string) bool {
	switch name {
	case "script", "pre", "style", "textarea":
		return true
	}
	return false
}

// isBlockTag: the tag names that start an HTML block of the sixth kind.
func isBlockTag(name string) bool {
	switch name {
	case "address", "article", "aside", "base", "basefont", "blockquote", "body",
		"caption", "center", "col", "colgroup", "dd", "details", "dialog", "dir",
		"div", "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form",
		"frame", "frameset", "h1", "h2", "h3", "h4", "h5", "h6", "head", "header",
		"hr", "html", "iframe", "legend", "li", "link", "main", "menu", "menuitem",
		"nav", "noframes", "ol", "optgroup", "option", "p", "param", "search",
		"section", "summary", "table", "tbody", "td", "tfoot", "th", "thead",
		"title", "tr", "track", "ul":
		return true
	}
	return false
}

func isASCIILetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

func isASCIIDigit(c byte) bool { return c >= '0' && c <= '9' }

func isHTMLSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'
}

// scanTagName returns the end of the tag name that starts at i, or i.
func scanTagName(s string, i int) int {
	if i >= len(s) || !isASCIILetter(s[i]) {
		return i
	}
	i++
	for i < len(s) && (isASCIILetter(s[i]) || isASCIIDigit(s[i]) || s[i] == '-') {
		i++
	}
	return i
}

func skipHTMLSpace(s string, i int) int {
	for i < len(s) && isHTMLSpace(s[i]) {
		i++
	}
	return i
}

// scanClosingTag returns the end of the closing tag "</name >" at i, or
// -1.
func scanClosingTag(s string, i int) int {
	if !strings.HasPrefix(s[i:], "</") {
		return -1
	}
	j := scanTagName(s, i+2)
	if j == i+2 {
		return -1
	}
	j = skipHTMLSpace(s, j)
	if j < len(s) && s[j] == '>' {
		return j + 1
	}
	return -1
}

// scanOpenTag returns the end of the open tag at i ("<name attr=value
// />"), or -1. find(from, c) finds a quoted value's closing quote; the
// inline parser passes one that remembers failed searches, so that a
// paragraph full of unclosed quotes is still scanned in linear time.
func scanOpenTag(s string, i int, find func(from int, c byte) int) int {
	if i >= len(s) || s[i] != '<' {
		return -1
	}
	j := scanTagName(s, i+1)
	if j == i+1 {
		return -1
	}
	for {
		k := skipHTMLSpace(s, j)
		if k >= len(s) {
			return -1
		}
		switch {
		case s[k] == '>':
			return k + 1
		case strings.HasPrefix(s[k:], "/>"):
			return k + 2
		case k == j:
			return -1 // an attribute must follow whitespace
		}
		// An attribute: a name, then maybe "=" and a value.
		c := s[k]
		if !isASCIILetter(c) && c != '_' && c != ':' {
			return -1
		}
		k++
		for k < len(s) && (isASCIILetter(s[k]) || isASCIIDigit(s[k]) || strings.IndexByte("_.:-", s[k]) >= 0) {
			k++
		}
		j = k
		k = skipHTMLSpace(s, k)
		if k >= len(s) || s[k] != '=' {
			continue
		}
		k = skipHTMLSpace(s, k+1)
		if k >= len(s) {
			return -1
		}
		switch q := s[k]; q {
		case '"', '\'':
			end := find(k+1, q)
			if end < 0 {
				return -1
			}
			j = end + 1
		default:
			start := k
			for k < len(s) && !isHTMLSpace(s[k]) && strings.IndexByte("\"'=<>`", s[k]) < 0 {
				k++
			}
			if k == start {
				return -1
			}
			j = k
		}
	}
}

// indexByteFrom is the index of the first c in s at or after from, or -1.
func indexByteFrom(s string, from int, c byte) int {
	if i := strings.IndexByte(s[from:], c); i >= 0 {
		return from + i
	}
	return -1
}
