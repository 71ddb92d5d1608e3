package eval

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
)

// node is a JSON value that keeps the order of object members, so a
// normalized request is stored in the order it was sent and its first
// difference is found in that order.
type node struct {
	kind jsontext.Kind // '"', '0', 't', 'f', 'n', '{', '['
	text string        // a string's value, a number's raw text
	keys []string      // object member names, in order
	vals []*node       // object member values or array elements
}

// parseTree decodes one JSON value.
func parseTree(data []byte) (*node, error) {
	dec := jsontext.NewDecoder(bytes.NewReader(data), jsontext.AllowDuplicateNames(false))
	n, err := readNode(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		return nil, errors.New("trailing data after the JSON value")
	}
	return n, nil
}

func readNode(dec *jsontext.Decoder) (*node, error) {
	tok, err := dec.ReadToken()
	if err != nil {
		return nil, err
	}
	n := &node{kind: tok.Kind()}
	switch n.kind {
	case '"', '0':
		n.text = tok.String()
	case '{':
		for dec.PeekKind() != '}' {
			k, err := dec.ReadToken()
			if err != nil {
				return nil, err
			}
			key := k.String() // before the next read voids the token
			v, err := readNode(dec)
			if err != nil {
				return nil, err
			}
			n.keys = append(n.keys, key)
			n.vals = append(n.vals, v)
		}
		if _, err := dec.ReadToken(); err != nil {
			return nil, err
		}
	case '[':
		for dec.PeekKind() != ']' {
			v, err := readNode(dec)
			if err != nil {
				return nil, err
			}
			n.vals = append(n.vals, v)
		}
		if _, err := dec.ReadToken(); err != nil {
			return nil, err
		}
	}
	return n, nil
}

// encode writes n as JSON (compact; callers indent when storing).
func (n *node) encode() ([]byte, error) {
	var buf bytes.Buffer
	enc := jsontext.NewEncoder(&buf)
	if err := n.write(enc); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

func (n *node) write(enc *jsontext.Encoder) error {
	switch n.kind {
	case '"':
		return enc.WriteToken(jsontext.String(n.text))
	case '0':
		return enc.WriteValue(jsontext.Value(n.text))
	case 't':
		return enc.WriteToken(jsontext.True)
	case 'f':
		return enc.WriteToken(jsontext.False)
	case 'n':
		return enc.WriteToken(jsontext.Null)
	case '{':
		if err := enc.WriteToken(jsontext.BeginObject); err != nil {
			return err
		}
		for i, k := range n.keys {
			if err := enc.WriteToken(jsontext.String(k)); err != nil {
				return err
			}
			if err := n.vals[i].write(enc); err != nil {
				return err
			}
		}
		return enc.WriteToken(jsontext.EndObject)
	case '[':
		if err := enc.WriteToken(jsontext.BeginArray); err != nil {
			return err
		}
		for _, v := range n.vals {
			if err := v.write(enc); err != nil {
				return err
			}
		}
		return enc.WriteToken(jsontext.EndArray)
	}
	return fmt.Errorf("unknown JSON kind %v", n.kind)
}

// get returns the member named key of an object, or nil.
func (n *node) get(key string) *node {
	if n == nil || n.kind != '{' {
		return nil
	}
	for i, k := range n.keys {
		if k == key {
			return n.vals[i]
		}
	}
	return nil
}

// str is the value of a string node, "" otherwise.
func (n *node) str() string {
	if n == nil || n.kind != '"' {
		return ""
	}
	return n.text
}

// mapStrings applies f to every string value (not member names) below n.
// path is the JSON path of each string, for rules that depend on where a
// string sits.
func (n *node) mapStrings(path []string, f func(path []string, s string) string) {
	switch n.kind {
	case '"':
		n.text = f(path, n.text)
	case '{':
		for i, k := range n.keys {
			n.vals[i].mapStrings(append(path, k), f)
		}
	case '[':
		for i, v := range n.vals {
			v.mapStrings(append(path, fmt.Sprintf("[%d]", i)), f)
		}
	}
}

// kindName names a JSON kind for a difference report.
func kindName(k jsontext.Kind) string {
	switch k {
	case '"':
		return "a string"
	case '0':
		return "a number"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	case '{':
		return "an object"
	case '[':
		return "an array"
	}
	return "nothing"
}

// difference is the first place where two JSON trees differ.
type difference struct {
	path   string // such as messages[3].content
	detail string // what differs, with the recorded and the current value
}

// firstDifference walks want (recorded) and got (current) in document
// order and describes the first place they differ; ok is false when they
// are equal. label names array elements for readers (a message's role).
func firstDifference(want, got *node, path string, label func(path string, n *node) string) (difference, bool) {
	if want.kind != got.kind && !(isBool(want) && isBool(got)) {
		return difference{path, fmt.Sprintf("recorded %s, now %s", describe(want), describe(got))}, true
	}
	switch want.kind {
	case '"', '0':
		if want.text != got.text {
			return difference{path, describeStrings(want, got)}, true
		}
	case 't', 'f':
		if want.kind != got.kind {
			return difference{path, fmt.Sprintf("recorded %s, now %s", describe(want), describe(got))}, true
		}
	case '{':
		for i, k := range want.keys {
			g := got.get(k)
			p := joinPath(path, k)
			if g == nil {
				return difference{p, fmt.Sprintf("recorded %s, now missing", describe(want.vals[i]))}, true
			}
			if d, ok := firstDifference(want.vals[i], g, p, label); ok {
				return d, true
			}
		}
		for i, k := range got.keys {
			if want.get(k) == nil {
				return difference{joinPath(path, k), fmt.Sprintf("not recorded, now %s", describe(got.vals[i]))}, true
			}
		}
	case '[':
		for i := 0; i < len(want.vals) && i < len(got.vals); i++ {
			p := fmt.Sprintf("%s[%d]", path, i)
			if d, ok := firstDifference(want.vals[i], got.vals[i], p, label); ok {
				if label != nil {
					if l := label(path, got.vals[i]); l != "" {
						d.path = strings.Replace(d.path, p, p+" ("+l+")", 1)
					}
				}
				return d, true
			}
		}
		if len(want.vals) != len(got.vals) {
			i := min(len(want.vals), len(got.vals))
			extra, side := want, "recorded"
			if len(got.vals) > len(want.vals) {
				extra, side = got, "now"
			}
			p := fmt.Sprintf("%s[%d]", path, i)
			if label != nil {
				if l := label(path, extra.vals[i]); l != "" {
					p += " (" + l + ")"
				}
			}
			return difference{p, fmt.Sprintf("%d elements recorded, %d now; the first extra one (%s) is %s", len(want.vals), len(got.vals), side, describe(extra.vals[i]))}, true
		}
	}
	return difference{}, false
}

func isBool(n *node) bool { return n.kind == 't' || n.kind == 'f' }

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// describe is a short form of a value for a difference report.
func describe(n *node) string {
	switch n.kind {
	case '"':
		return quoteShort(n.text, 0)
	case '0':
		return n.text
	case 't':
		return "true"
	case 'f':
		return "false"
	case 'n':
		return "null"
	case '{':
		return fmt.Sprintf("an object with %d members", len(n.keys))
	case '[':
		return fmt.Sprintf("an array of %d", len(n.vals))
	}
	return kindName(n.kind)
}

// describeStrings shows two different strings around their first
// differing character.
func describeStrings(want, got *node) string {
	if want.kind == '0' {
		return fmt.Sprintf("recorded %s, now %s", want.text, got.text)
	}
	a, b := want.text, got.text
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	// Back up to a rune boundary and show some context before it.
	start := max(0, i-40)
	for start > 0 && start < len(a) && !isRuneStart(a[start]) {
		start--
	}
	line := 1 + strings.Count(a[:i], "\n")
	return fmt.Sprintf("first difference at character %d (line %d): recorded %s, now %s",
		i+1, line, quoteShort(a[start:], start), quoteShort(b[start:], start))
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// quoteShort quotes at most 100 bytes of s, marking cut ends.
func quoteShort(s string, cutBefore int) string {
	const max = 100
	prefix, suffix := "", ""
	if cutBefore > 0 {
		prefix = "…"
	}
	if len(s) > max {
		end := max
		for end > 0 && !isRuneStart(s[end]) {
			end--
		}
		s, suffix = s[:end], "…"
	}
	return prefix + fmt.Sprintf("%q", s) + suffix
}
