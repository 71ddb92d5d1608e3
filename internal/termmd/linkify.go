package termmd

import "strings"

// GitHub's extended autolinks: a bare "https://...", "http://...",
// "ftp://...", "www...." or e-mail address in text is a link. It must start a line or
// follow a space or one of "*_~(", and it ends at a space or "<", less
// trailing punctuation, an unbalanced ")" and a trailing entity-like
// "&name;". Unlike GitHub, a scheme's host needs no dot
// (http://localhost:8080 is a link too), a backtick ends the URL and an
// unbalanced "]" is trimmed like ")".

// linkify turns the bare URLs in the text under n into autolinks; the
// text of links, images and code is left alone.
func linkify(n *node) {
	for c := n.firstChild; c != nil; c = c.next {
		switch c.kind {
		case kindText:
			c = linkifyText(c)
		case kindLink, kindImage, kindAutoLink, kindCodeSpan, kindRawHTML:
		default:
			linkify(c)
		}
	}
}

// linkifyText splits t at its URLs and returns the last node of the
// result.
func linkifyText(t *node) *node {
	s := t.literal
	for i := 0; i < len(s); i++ {
		start, end, dest := i, i, ""
		switch s[i] {
		case 'h', 'w', 'f', 'H', 'W', 'F':
			if i > 0 && !strings.ContainsRune(" \t\n*_~(", rune(s[i-1])) || i == 0 && !mayPrecedeURL(t.prev) {
				continue
			}
			end, dest = urlAt(s, i)
		case '@':
			start, end = emailAt(s, i)
			dest = "mailto:" + s[start:end]
		}
		if end <= i {
			continue
		}
		link := &node{kind: kindAutoLink, literal: s[start:end], dest: dest}
		t.literal = s[:start]
		t.insertAfter(link)
		rest := &node{kind: kindText, literal: s[end:]}
		link.insertAfter(rest)
		if t.literal == "" {
			t.unlink()
		}
		if rest.literal == "" {
			rest.unlink()
			return link
		}
		return linkifyText(rest)
	}
	return t
}

// mayPrecedeURL reports whether a URL may start right after n: at the
// start of a line or after emphasis (whose closing delimiter it follows).
func mayPrecedeURL(n *node) bool {
	if n == nil {
		return true
	}
	switch n.kind {
	case kindSoftBreak, kindHardBreak, kindEmphasis, kindStrikethrough, kindTaskMarker:
		return true
	}
	return false
}

// urlAt returns the end of the URL that starts at s[i] and its
// destination, or i.
func urlAt(s string, i int) (int, string) {
	rest := s[i:]
	scheme := ""
	for _, prefix := range [...]string{"https://", "http://", "ftp://", "www."} {
		if len(rest) >= len(prefix) && strings.EqualFold(rest[:len(prefix)], prefix) {
			scheme = prefix
			break
		}
	}
	if scheme == "" {
		return i, ""
	}
	// The host: letters, digits, '-' and '_' in dot-separated labels; no
	// '_' in the last two labels.
	hostStart := i + len(scheme)
	end := hostStart
	for end < len(s) && (isASCIILetter(s[end]) || isASCIIDigit(s[end]) || s[end] >= 0x80 || strings.IndexByte("-_.", s[end]) >= 0) {
		end++
	}
	host := strings.TrimRight(s[hostStart:end], ".")
	if host == "" {
		return i, ""
	}
	labels := strings.Split(host, ".")
	for k := max(len(labels)-2, 0); k < len(labels); k++ {
		if strings.IndexByte(labels[k], '_') >= 0 {
			return i, ""
		}
	}
	// The path: up to a space or '<' (GitHub), or a backtick (which
	// closes code around the URL far more often than it belongs to it).
	for end < len(s) && s[end] != '<' && s[end] != '`' && s[end] != ' ' && s[end] != '\t' && s[end] != '\n' {
		end++
	}
	end = trimURLEnd(s[:end], i)
	if end <= hostStart {
		return i, ""
	}
	dest := s[i:end]
	if scheme == "www." {
		dest = "http://" + dest
	}
	return end, dest
}

// emailAt returns the bounds of the e-mail address around the '@' at
// s[at] (letters, digits and "._+-" before it, a domain with a dot after
// it), or at, at.
func emailAt(s string, at int) (start, end int) {
	start = at
	for start > 0 && (isASCIILetter(s[start-1]) || isASCIIDigit(s[start-1]) || strings.IndexByte("._+-", s[start-1]) >= 0) {
		start--
	}
	end = at + 1
	for end < len(s) && (isASCIILetter(s[end]) || isASCIIDigit(s[end]) || strings.IndexByte("._-", s[end]) >= 0) {
		end++
	}
	for end > at+1 && s[end-1] == '.' {
		end--
	}
	if start == at || !strings.Contains(s[at+1:end], ".") || s[end-1] == '-' || s[end-1] == '_' {
		return at, at
	}
	return start, end
}

// trimURLEnd drops what ends a sentence rather than the URL s[start:].
func trimURLEnd(s string, start int) int {
	end := len(s)
	opens, closes := strings.Count(s[start:], "("), strings.Count(s[start:], ")")
	openBrackets, closeBrackets := strings.Count(s[start:], "["), strings.Count(s[start:], "]")
	for end > start {
		switch c := s[end-1]; c {
		case '?', '!', '.', ',', ':', '*', '_', '~', '\'', '"':
			end--
			continue
		case ')':
			if closes > opens {
				end--
				closes--
				continue
			}
		case ']': // as ')': "[see https://a.b/c]"
			if closeBrackets > openBrackets {
				end--
				closeBrackets--
				continue
			}
		case ';':
			from := max(start, end-34) // entity names are short
			amp := strings.LastIndexByte(s[from:end], '&')
			if amp >= 0 && isEntityName(s[from+amp+1:end-1]) {
				end = from + amp
				continue
			}
		}
		break
	}
	return end
}

func isEntityName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isASCIILetter(s[i]) && !isASCIIDigit(s[i]) {
			return false
		}
	}
	return true
}
