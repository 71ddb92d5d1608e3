package eval

import (
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/go-json-experiment/json/jsontext"
)

// Placeholders that stand for what legitimately differs between two runs
// of the same task. Recorded replies carry them too and get the current
// values back when they are replayed.
const (
	rootPlaceholder = "@@EVAL_ROOT@@"
	homePlaceholder = "@@HOME@@"
	redacted        = "[REDACTED]"
)

// Patterns of tool output that differ from run to run without meaning
// anything: elapsed times (go test's "0.004s" or "(cached)"), wall-clock
// timestamps and UUIDs. They are replaced only inside the messages of a
// request, never in tool definitions or the model's own words. They are
// compiled on first use: every tiny-go start would pay for it at init.
var (
	timestampPattern = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:?\d{2})?\b`)
	})
	uuidPattern = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b`)
	})
)

// normalizer turns what differs between runs of one task into stable
// placeholders, and takes secrets out.
type normalizer struct {
	// paths maps each spelling of a run-specific path (as is and
	// symlink-resolved) to its placeholder, longest first.
	paths   []pathRule
	secrets []string
}

type pathRule struct{ value, placeholder string }

// newNormalizer normalizes the task's root directory and the home
// directory, and redacts secrets (values shorter than 8 bytes are not
// treated as secrets: they would redact ordinary words).
func newNormalizer(roots []string, home string, secrets []string) *normalizer {
	n := &normalizer{}
	for _, r := range roots {
		if len(r) > 1 {
			n.paths = append(n.paths, pathRule{r, rootPlaceholder})
		}
	}
	if len(home) > 1 {
		n.paths = append(n.paths, pathRule{home, homePlaceholder})
	}
	// Longest first, so a root inside the home directory is the root.
	slices.SortStableFunc(n.paths, func(a, b pathRule) int { return len(b.value) - len(a.value) })
	for _, s := range secrets {
		if len(s) >= 8 {
			n.secrets = append(n.secrets, s)
		}
	}
	return n
}

// text normalizes paths and secrets in any text.
func (n *normalizer) text(s string) string {
	for _, sec := range n.secrets {
		s = strings.ReplaceAll(s, sec, redacted)
	}
	for _, p := range n.paths {
		s = strings.ReplaceAll(s, p.value, p.placeholder)
	}
	return s
}

// request normalizes a request body: paths and secrets everywhere, and in
// the messages also elapsed times, timestamps and UUIDs. The result keeps
// the member order of the request.
func (n *normalizer) request(body []byte) (*node, error) {
	tree, err := parseTree(body)
	if err != nil {
		return nil, err
	}
	tree.mapStrings(nil, func(path []string, s string) string {
		s = n.text(s)
		if len(path) > 0 && path[0] == "messages" {
			s = volatile(s)
		}
		return s
	})
	return tree, nil
}

// volatile replaces elapsed times, timestamps and UUIDs. It works line by
// line, and skips lines that cannot match: Go's regexp is fast on short
// inputs, and tool output is mostly long text of short lines.
func volatile(s string) string {
	if !strings.ContainsAny(s, "0123456789") {
		return s
	}
	lines := strings.SplitAfter(s, "\n")
	changed := false
	for i, line := range lines {
		if !strings.ContainsAny(line, "0123456789") {
			continue
		}
		l := line
		if strings.Contains(l, "-") {
			l = timestampPattern().ReplaceAllString(l, "<timestamp>")
			l = uuidPattern().ReplaceAllString(l, "<uuid>")
		}
		l = replaceDurations(l)
		if l != line {
			lines[i], changed = l, true
		}
	}
	if !changed {
		return s
	}
	return strings.Join(lines, "")
}

// replaceDurations replaces elapsed times such as "0.004s", "12ms" or
// "3m" (a number standing alone with a unit), jest's "(5 ms)", the number
// of node's "duration_ms: 1.23" (and its summary's "duration_ms 52.6") and
// go test's "(cached)" with
// "<duration>". It is a scanner rather than a regular expression because
// it runs over every line of every tool result of every request.
func replaceDurations(s string) string {
	var b strings.Builder
	last := 0 // s[:last] is written or skipped
	for i := 0; i < len(s); {
		if strings.HasPrefix(s[i:], "(cached)") {
			b.WriteString(s[last:i])
			b.WriteString("<duration>")
			i += len("(cached)")
			last = i
			continue
		}
		if !isDigit(s[i]) || i > 0 && isWordByte(s[i-1]) {
			i++
			continue
		}
		j := i
		for j < len(s) && isDigit(s[j]) {
			j++
		}
		if j+1 < len(s) && s[j] == '.' && isDigit(s[j+1]) {
			j++
			for j < len(s) && isDigit(s[j]) {
				j++
			}
		}
		end := unitEnd(s, j)
		if end < 0 && i > 0 && s[i-1] == '(' && j < len(s) && s[j] == ' ' {
			// jest's "(5 ms)": a unit after one space, inside parentheses
			if e := unitEnd(s, j+1); e > 0 && e < len(s) && s[e] == ')' {
				end = e
			}
		}
		if end < 0 && (strings.HasSuffix(s[:i], "duration_ms: ") || strings.HasSuffix(s[:i], "duration_ms ")) {
			end = j // node's test runner: "duration_ms: 1.234", "# duration_ms 52.6"
		}
		if end < 0 {
			i = j
			continue
		}
		b.WriteString(s[last:i])
		b.WriteString("<duration>")
		i, last = end, end
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isWordByte(c byte) bool {
	return isDigit(c) || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_'
}

// restore puts the current run's values back into recorded text: the
// inverse of the path rules (secrets stay redacted). jsonEscaped is set
// when s is JSON text, so a path is inserted in its escaped form.
func restore(s, root, home string, jsonEscaped bool) string {
	esc := func(v string) string {
		if !jsonEscaped {
			return v
		}
		b, err := jsontext.AppendQuote(nil, v)
		if err != nil {
			return v // invalid UTF-8 in a path: inserted as is
		}
		return string(b[1 : len(b)-1])
	}
	s = strings.ReplaceAll(s, rootPlaceholder, esc(root))
	if home != "" {
		s = strings.ReplaceAll(s, homePlaceholder, esc(home))
	}
	return s
}

// unitEnd is the end of a time unit that starts at s[j] and stands alone,
// or -1.
func unitEnd(s string, j int) int {
	for _, unit := range []string{"ns", "µs", "us", "ms", "s", "m", "h"} {
		if strings.HasPrefix(s[j:], unit) && (j+len(unit) == len(s) || !isWordByte(s[j+len(unit)])) {
			return j + len(unit)
		}
	}
	return -1
}
