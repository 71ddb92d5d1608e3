package session

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
)

// FuzzStrictJSON checks, for any line: decoding never panics; jsontext's
// verdict on strict JSON equals an independent checker's (duplicate names
// at any depth, lone surrogates, invalid UTF-8, syntax); the one-pass
// strict decoding accepts only what jsontext accepts and decodes it as the
// trusting scanner does, which walks every valid value exactly; and a
// decoded transaction
// encodes back to the same JSON, at a fixpoint.
func FuzzStrictJSON(f *testing.F) {
	for _, dir := range fuzzSeedDirs(f) {
		files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
		for _, file := range files {
			data, _ := os.ReadFile(file)
			for _, line := range bytes.Split(data, []byte("\n")) {
				f.Add(line)
			}
		}
	}
	for _, s := range []string{`{"a":1,"\u0061":2}`, `"\ud800"`, "\"\xed\xa0\x80\"", `[{"b":{"c":[1,{"d":1,"d":2}]}}]`, `"\ud83d\ude00"`, `-0.0e+1`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		checkStrictAgrees(t, line)
		tx, c := DecodeTransaction(line)
		valid := independentValid(line)
		if got := validStrict(line); got != valid {
			t.Fatalf("jsontext says valid=%v, the independent check %v, for %q", got, valid, line)
		}
		syntaxFault := c != nil && (c.Code == CorruptMalformedJSON || c.Code == CorruptInvalidUTF8 || c.Code == CorruptBlankLine)
		if !bytes.HasSuffix(line, []byte("\r")) && syntaxFault == valid {
			t.Fatalf("DecodeTransaction = %v for a line whose strictness is %v: %q", c, valid, line)
		}
		if valid {
			var r reader
			if err := r.load(line); err != nil {
				t.Fatal(err)
			}
			if err := r.skip(); err != nil || r.end() != nil {
				t.Fatalf("the scanner did not walk %q exactly: %v", line, err)
			}
		}
		if c != nil {
			return
		}
		enc, err := EncodeTransaction(tx)
		if err != nil {
			t.Fatalf("decoded %q but cannot encode it: %v", line, err)
		}
		enc = enc[:len(enc)-1]
		var a, b any
		if json.Unmarshal(line, &a) != nil || json.Unmarshal(enc, &b) != nil {
			t.Fatal("not JSON")
		}
		if arr, ok := a.([]any); ok && len(arr) == 1 {
			a = arr[0] // one fact is written as a bare object
		}
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("re-encoding changed the JSON:\n%s\n%s", line, enc)
		}
		tx2, c := DecodeTransaction(enc)
		if c != nil {
			t.Fatal(c)
		}
		enc2, err := EncodeTransaction(tx2)
		if err != nil || !bytes.Equal(enc2[:len(enc2)-1], enc) {
			t.Fatalf("encoding is not a fixpoint: %v\n%s\n%s", err, enc, enc2)
		}
	})
}

// fuzzSeedDirs are the shared fixtures and this package's scenarios.
func fuzzSeedDirs(f *testing.F) []string {
	return []string{filepath.Join(sessionDir(f), "fixtures"), filepath.Join("testdata", "scenarios")}
}

// independentValid is a small strict JSON checker written apart from
// jsontext: RFC 8259 syntax, valid UTF-8, no lone surrogate escapes, no
// duplicate names (compared after unescaping), depth at most 10000.
func independentValid(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	p := &jsonCheck{b: b}
	p.ws()
	if !p.value(0) {
		return false
	}
	p.ws()
	return p.i == len(p.b)
}

type jsonCheck struct {
	b []byte
	i int
}

func (p *jsonCheck) ws() {
	for p.i < len(p.b) && (p.b[p.i] == ' ' || p.b[p.i] == '\t' || p.b[p.i] == '\n' || p.b[p.i] == '\r') {
		p.i++
	}
}

func (p *jsonCheck) eat(c byte) bool {
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

func (p *jsonCheck) value(depth int) bool {
	if p.i >= len(p.b) {
		return false
	}
	switch c := p.b[p.i]; {
	case c == '{' || c == '[':
		if depth >= 10000 {
			return false
		}
		p.i++
		p.ws()
		close := byte(']')
		var names map[string]bool
		if c == '{' {
			close, names = '}', map[string]bool{}
		}
		if p.eat(close) {
			return true
		}
		for {
			p.ws()
			if names != nil {
				name, ok := p.str()
				if !ok || names[name] {
					return false
				}
				names[name] = true
				p.ws()
				if !p.eat(':') {
					return false
				}
				p.ws()
			}
			if !p.value(depth + 1) {
				return false
			}
			p.ws()
			if p.eat(close) {
				return true
			}
			if !p.eat(',') {
				return false
			}
		}
	case c == '"':
		_, ok := p.str()
		return ok
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	}
	for _, lit := range []string{"true", "false", "null"} {
		if bytes.HasPrefix(p.b[p.i:], []byte(lit)) {
			p.i += len(lit)
			return true
		}
	}
	return false
}

func (p *jsonCheck) number() bool {
	p.eat('-')
	digits := func() int {
		n := 0
		for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
			p.i++
			n++
		}
		return n
	}
	if p.eat('0') {
		// no more integer digits
	} else if digits() == 0 {
		return false
	}
	if p.eat('.') && digits() == 0 {
		return false
	}
	if p.eat('e') || p.eat('E') {
		if !p.eat('+') {
			p.eat('-')
		}
		if digits() == 0 {
			return false
		}
	}
	return true
}

// str reads a string and returns it unescaped.
func (p *jsonCheck) str() (string, bool) {
	if !p.eat('"') {
		return "", false
	}
	var out []rune
	for p.i < len(p.b) {
		r, size := utf8.DecodeRune(p.b[p.i:])
		p.i += size
		switch {
		case r == '"':
			return string(out), true
		case r < 0x20:
			return "", false
		case r != '\\':
			out = append(out, r)
			continue
		}
		if p.i >= len(p.b) {
			return "", false
		}
		e := p.b[p.i]
		p.i++
		switch e {
		case '"', '\\', '/':
			out = append(out, rune(e))
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			u, ok := p.hex4()
			if !ok {
				return "", false
			}
			switch {
			case utf16.IsSurrogate(u) && u < 0xdc00:
				if !p.eat('\\') || !p.eat('u') {
					return "", false
				}
				low, ok := p.hex4()
				if !ok || low < 0xdc00 || low > 0xdfff {
					return "", false
				}
				out = append(out, utf16.DecodeRune(u, low))
			case utf16.IsSurrogate(u):
				return "", false
			default:
				out = append(out, u)
			}
		default:
			return "", false
		}
	}
	return "", false
}

func (p *jsonCheck) hex4() (rune, bool) {
	if p.i+4 > len(p.b) {
		return 0, false
	}
	var r rune
	for _, c := range p.b[p.i : p.i+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r*16 + rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r*16 + rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r*16 + rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	p.i += 4
	return r, true
}
