package termmd

import (
	"regexp"
	"strings"
	"sync"
)

// GitHub's extended autolinks: a bare "https://...", "http://...",
// "ftp://...", "www...." or e-mail address in text is a link. It must
// start a line or follow a space or one of "*_~(", and it ends at a space
// or "<", less trailing punctuation, an unbalanced ")" and a trailing
// entity-like "&name;". Unlike GitHub, a scheme's host needs no dot
// (http://localhost:8080 is a link too), a backtick ends the URL and an
// unbalanced "]" is trimmed like ")". They are found on the decoded text,
// as cmark-gfm does: goldmark's Linkify takes a "]" into a URL and finds
// none inside brackets.

// bareLink matches a URL (group 1 its scheme or "www.", group 2 its host)
// or an e-mail address; entityEnd a character reference that ends a URL
// (it is not the URL's). Both are compiled on first use.
var bareLink = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile("(?i)((?:https?|ftp)://|www\\.)((?:[-\\w.]|[^\\x00-\\x7f])*)[^ \\t\\n<`]*|[\\w.+-]+@[\\w.-]+")
})
var entityEnd = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("&[a-zA-Z0-9]+;$") })

// linkify turns the bare URLs in the text under n into autolinks; the
// text of links, images and code is left alone.
func linkify(n *node) {
	var prev *node
	for c := n.firstChild; c != nil; prev, c = c, c.next {
		switch c.kind {
		case kindText:
			c = linkifyText(c, prev)
		case kindLink, kindImage, kindAutoLink, kindCodeSpan, kindRawHTML:
		default:
			linkify(c)
		}
	}
}

// linkifyText splits t, which follows prev, at its URLs and returns the
// last node of the result (t keeps the text before the first).
func linkifyText(t, prev *node) *node {
	s, last, cur := t.literal, 0, t
	if !strings.Contains(s, "://") && !strings.Contains(s, "@") && !strings.Contains(strings.ToLower(s), "www.") {
		return t // cannot hold a link: the expression costs more than these
	}
	add := func(n *node) { cur.insertAfter(n); cur = n }
	for _, m := range bareLink().FindAllStringSubmatchIndex(s, -1) {
		start, end, dest := m[0], -1, ""
		if !mayStartLink(s, start, prev) {
			continue
		}
		if m[2] >= 0 {
			end, dest = urlEnd(s, m)
		} else {
			end, dest = emailEnd(s, start, m[1])
		}
		if end < 0 {
			continue
		}
		if cur == t {
			t.literal = s[:start]
		} else if start > last {
			add(&node{kind: kindText, literal: s[last:start]})
		}
		add(&node{kind: kindAutoLink, literal: s[start:end], dest: dest})
		last = end
	}
	if cur != t && last < len(s) {
		add(&node{kind: kindText, literal: s[last:]})
	}
	return cur
}

// mayStartLink reports whether a link may start at s[i]: at the start of
// a line, after a space, an opening parenthesis or emphasis (whose
// delimiter it follows).
func mayStartLink(s string, i int, prev *node) bool {
	if i > 0 {
		return strings.IndexByte(" \t\n*_~(", s[i-1]) >= 0
	}
	if prev == nil {
		return true
	}
	switch prev.kind {
	case kindSoftBreak, kindHardBreak, kindEmphasis, kindStrikethrough, kindTaskMarker:
		return true
	}
	return false
}

// urlEnd returns the end of URL match m in s and its destination, or -1:
// its host has no '_' in its last two labels.
func urlEnd(s string, m []int) (int, string) {
	host := strings.TrimRight(s[m[4]:m[5]], ".")
	labels := strings.Split(host, ".")
	if host == "" || strings.Contains(strings.Join(labels[max(len(labels)-2, 0):], "."), "_") {
		return -1, ""
	}
	end := trimURLEnd(s[:m[1]], m[0])
	if end <= m[4] {
		return -1, ""
	}
	if strings.EqualFold(s[m[2]:m[3]], "www.") {
		return end, "http://" + s[m[0]:end]
	}
	return end, s[m[0]:end]
}

// emailEnd returns the end of the e-mail address s[start:end] less
// trailing dots and its destination, or -1: its domain needs a dot and
// cannot end in '-' or '_'.
func emailEnd(s string, start, end int) (int, string) {
	at := start + strings.IndexByte(s[start:end], '@')
	end = at + 1 + len(strings.TrimRight(s[at+1:end], "."))
	if !strings.Contains(s[at+1:end], ".") || strings.ContainsAny(s[end-1:end], "-_") {
		return -1, ""
	}
	return end, "mailto:" + s[start:end]
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
			if loc := entityEnd().FindStringIndex(s[from:end]); loc != nil {
				end = from + loc[0]
				continue
			}
		}
		break
	}
	return end
}
