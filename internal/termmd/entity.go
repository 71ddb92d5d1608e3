package termmd

import (
	"strconv"
	"unicode/utf8"
)

// decodeEntity decodes the entity or numeric character reference at the
// start of s ("&amp;", "&#35;", "&#x22;") and returns it and its length
// in s, or 0 if there is none. Only a few named entities are known, in a
// switch rather than the HTML5 table (a map of 2,000 entries built when
// the program starts, for every command); others stay as written.
func decodeEntity(s string) (string, int) {
	if len(s) < 3 || s[0] != '&' {
		return "", 0
	}
	if s[1] == '#' {
		return decodeNumeric(s)
	}
	end := 1
	for end < len(s) && end <= 32 && (isASCIILetter(s[end]) || end > 1 && isASCIIDigit(s[end])) {
		end++
	}
	if end == 1 || end >= len(s) || s[end] != ';' {
		return "", 0
	}
	if r := namedEntity(s[1:end]); r != "" {
		return r, end + 1
	}
	return "", 0
}

// decodeNumeric decodes "&#123;" or "&#x7b;"; a code point that is not
// valid (0 included) becomes U+FFFD, as CommonMark says.
func decodeNumeric(s string) (string, int) {
	digits, base := 2, 10
	if len(s) > 2 && (s[2] == 'x' || s[2] == 'X') {
		digits, base = 3, 16
	}
	end := digits
	for end < len(s) && end-digits < 8 && isDigitIn(s[end], base) {
		end++
	}
	maxDigits := 7
	if base == 16 {
		maxDigits = 6
	}
	if end == digits || end-digits > maxDigits || end >= len(s) || s[end] != ';' {
		return "", 0
	}
	code, _ := strconv.ParseUint(s[digits:end], base, 32)
	r := rune(code)
	if code == 0 || !utf8.ValidRune(r) {
		r = utf8.RuneError
	}
	return string(r), end + 1
}

func isDigitIn(c byte, base int) bool {
	if base == 16 {
		return isASCIIDigit(c) || c|0x20 >= 'a' && c|0x20 <= 'f'
	}
	return isASCIIDigit(c)
}

// namedEntity: the named entities replies use, or "".
func namedEntity(name string) string {
	switch name {
	case "amp":
		return "&"
	case "lt":
		return "<"
	case "gt":
		return ">"
	case "quot":
		return `"`
	case "apos":
		return "'"
	case "nbsp":
		return "\u00a0"
	case "copy":
		return "©"
	case "reg":
		return "®"
	case "trade":
		return "™"
	case "hellip":
		return "…"
	case "mdash":
		return "—"
	case "ndash":
		return "–"
	case "lsquo":
		return "‘"
	case "rsquo":
		return "’"
	case "ldquo":
		return "“"
	case "rdquo":
		return "”"
	case "laquo":
		return "«"
	case "raquo":
		return "»"
	case "bull":
		return "•"
	case "middot":
		return "·"
	case "times":
		return "×"
	case "divide":
		return "÷"
	case "plusmn":
		return "±"
	case "deg":
		return "°"
	case "micro":
		return "µ"
	case "sect":
		return "§"
	case "para":
		return "¶"
	case "euro":
		return "€"
	case "pound":
		return "£"
	case "yen":
		return "¥"
	case "cent":
		return "¢"
	case "larr":
		return "←"
	case "rarr":
		return "→"
	case "uarr":
		return "↑"
	case "darr":
		return "↓"
	case "harr":
		return "↔"
	case "lArr":
		return "⇐"
	case "rArr":
		return "⇒"
	case "hArr":
		return "⇔"
	case "ne":
		return "≠"
	case "le":
		return "≤"
	case "ge":
		return "≥"
	case "asymp":
		return "≈"
	case "infin":
		return "∞"
	case "minus":
		return "−"
	case "check":
		return "✓"
	case "ensp":
		return "\u2002"
	case "emsp":
		return "\u2003"
	case "thinsp":
		return "\u2009"
	case "zwj":
		return "\u200d"
	case "zwnj":
		return "\u200c"
	}
	return ""
}
