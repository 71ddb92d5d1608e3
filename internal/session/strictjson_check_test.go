package session

import (
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// strictAccepts reports whether a strict reader accepts b as one value
// (b must be valid UTF-8, as the framing check guarantees).
func strictAccepts(b []byte) bool {
	var r reader
	r.reset(b, false)
	return r.checkValue(0) == nil && r.end() == nil
}

// TestStrictReaderNeverAcceptsMore checks the fast path against jsontext on
// the cases jsontext's defaults are pinned on and on a few of its own: it
// may decline valid text (jsontext then decides) but never accepts
// invalid text.
func TestStrictReaderNeverAcceptsMore(t *testing.T) {
	deep := strings.Repeat("[", checkMaxDepth+1) + strings.Repeat("]", checkMaxDepth+1)
	var many strings.Builder
	many.WriteString("{")
	for i := range checkMaxNames + 1 {
		if i > 0 {
			many.WriteString(",")
		}
		many.WriteString(`"k` + strings.Repeat("x", i) + `":1`)
	}
	many.WriteString("}")
	for _, tc := range []struct {
		text            string
		valid, accepted bool
	}{
		{`{"a":1,"b":[true,null,"x"]}`, true, true},
		{" \t{\"a\":1} \r", true, true},
		{`"\ud83d\ude00"`, true, true},
		{`"\u0000\n\"\\\/"`, true, true},
		{`-0.0e+1`, true, true},
		{`[{"a":1},{"a":1}]`, true, true}, // the same name in two objects
		{`{"a":{"a":1}}`, true, true},
		{`{"a":1,"a":2}`, false, false},
		{`{"a":1,"\u0061":2}`, false, false},
		{`[{"a":{"b":1,"b":1}}]`, false, false},
		{`"\ud800"`, false, false},
		{`"\udc00"`, false, false},
		{`"\ud800\u0041"`, false, false},
		{`"\ud800\ud800"`, false, false},
		{`"\x"`, false, false},
		{`"\u12"`, false, false},
		{"\"a\x01b\"", false, false},
		{"\"a\x7fb\"", true, true},
		{`{} {}`, false, false},
		{"\"\"\x00", false, false}, // a NUL after the value
		{`[1,]`, false, false},
		{`{"a":1,}`, false, false},
		{`[,1]`, false, false},
		{`{"a" 1}`, false, false},
		{`{"a":1 "b":2}`, false, false},
		{`{"a":1]`, false, false},
		{`[1}`, false, false},
		{`[1`, false, false},
		{`"abc`, false, false},
		{`01`, false, false},
		{`1.`, false, false},
		{`.5`, false, false},
		{`1e`, false, false},
		{`+1`, false, false},
		{`-`, false, false},
		{`nul`, false, false},
		{`nullx`, false, false},
		{`truefalse`, false, false},
		{`{'a':1}`, false, false},
		{`{a:1}`, false, false},
		{``, false, false},
		{"\ufeff{}", false, false},
		{`{"\u0061":1}`, true, false}, // declined: escaped names are jsontext's to compare
		{deep, true, false},           // declined: deep nesting
		{many.String(), true, false},  // declined: many names
	} {
		b := []byte(tc.text)
		if !utf8.Valid(b) {
			t.Fatalf("%q: test text must be UTF-8", tc.text)
		}
		if got := validStrict(b); got != tc.valid {
			t.Errorf("validStrict(%.40q) = %v, want %v", tc.text, got, tc.valid)
		}
		if got := strictAccepts(b); got != tc.accepted {
			t.Errorf("strict reader accepts %.40q: %v, want %v", tc.text, got, tc.accepted)
		}
	}
}

// TestStrictDecodeFallsBack checks that a line the strict reader rejects
// or declines gets jsontext's verdict: malformed lines are MALFORMED_JSON
// wherever the fault is, and valid lines the fast path declines decode
// as they would have.
func TestStrictDecodeFallsBack(t *testing.T) {
	const fact = `{"entry":{"message":{"content":"hi","role":"user"},"type":"message"},"id":"018f0000-0000-7000-8000-000000000001","kind":"entry","seq":1,"timestamp":1}`
	const started = `{"id":"018f0000-0000-7000-8000-000000000002","kind":"record","record":{"arguments":ARGS,"assistantEntryId":"018f0000-0000-7000-8000-000000000003","environmentIdentity":"/w","operationId":"018f0000-0000-7000-8000-000000000004","replay":"safe","replayKey":"k","resultEntryId":"018f0000-0000-7000-8000-000000000005","stepId":"018f0000-0000-7000-8000-000000000006","toolCallId":"call_1","toolIndex":0,"toolName":"read","type":"toolStarted"},"seq":1,"timestamp":1}`
	for _, line := range []string{
		strings.Replace(fact, `"kind":"entry"`, `"kind":"entry","kind":"entry"`, 1),
		strings.Replace(fact, `"kind":"entry"`, `"kind":"entry","k\u0069nd":"entry"`, 1),
		strings.Replace(fact, `"role":"user"`, `"role":"user","role":"user"`, 1),
		strings.Replace(fact, `"type":"message"`, `"type":"message","type":"message"`, 1),
		strings.Replace(fact, `"hi"`, `"\ud800"`, 1),
		strings.Replace(fact, `"hi"`, "\"h\x01i\"", 1),
		strings.Replace(fact, `"seq":1`, `"seq":01`, 1),
		strings.Replace(fact, `"seq":1,`, `"seq":1,,`, 1),
		strings.Replace(fact, `}`, `,}`, 1),
		"[" + fact + "," + "]",
		"[" + fact + "}",
		fact + " 1",
		strings.Replace(started, "ARGS", `{"a":1,"a":2}`, 1),
		strings.Replace(started, "ARGS", `{"a":{"b":[1,{"c":1,"c":1}]}}`, 1),
		strings.Replace(started, "ARGS", `{"a":"\u0061","\u0061":2}`, 1),
		strings.Replace(started, "ARGS", `{"a":tru}`, 1),
		strings.Replace(started, "ARGS", `{"a":1.e5}`, 1),
	} {
		if _, c := DecodeTransaction([]byte(line)); c == nil || c.Code != CorruptMalformedJSON {
			t.Errorf("DecodeTransaction(%s) = %v, want MALFORMED_JSON", line, c)
		}
	}
	for _, args := range []string{`{"\u0061":1}`, `{"a":` + strings.Repeat("[", 300) + strings.Repeat("]", 300) + `}`} {
		line := []byte(strings.Replace(started, "ARGS", args, 1))
		var d txDecoder
		d.rd.reset(line, false)
		if _, _, err := d.walk(); err == nil {
			t.Fatalf("the strict reader did not decline %s", args)
		}
		tx, c := DecodeTransaction(line)
		if c != nil {
			t.Fatalf("DecodeTransaction with arguments %s: %v", args, c)
		}
		if got := string(tx[0].Record.(*ToolStarted).Arguments); got != args {
			t.Errorf("arguments = %s, want %s", got, args)
		}
	}
}

// checkStrictAgrees is the fuzz targets' check that the one-pass strict
// decoding of line accepts only strict JSON and decodes it exactly as
// the trusted reader does after jsontext validated the line.
func checkStrictAgrees(t *testing.T, line []byte) {
	t.Helper()
	if !utf8.Valid(line) {
		return
	}
	valid := validStrict(line)
	if strictAccepts(line) && !valid {
		t.Fatalf("the strict reader accepts %q, which is not strict JSON", line)
	}
	var fast, slow txDecoder
	fast.rd.reset(line, false)
	facts, _, err := fast.walk()
	if err != nil || fast.rd.dup {
		return
	}
	if !valid {
		t.Fatalf("the strict reader decoded %q, which is not strict JSON", line)
	}
	want, _, err := slow.factsTrusted(line)
	if err != nil {
		t.Fatalf("the strict reader decoded %q, the trusted one says %v", line, err)
	}
	if !reflect.DeepEqual(facts, want) {
		t.Fatalf("strict and trusted decodings of %q differ:\n%#v\n%#v", line, facts, want)
	}
	// The reducer's decoder (interning, arenas, snapshot cache) decodes
	// the same, also when the line repeats and its snapshot is cached.
	var cached txDecoder
	cached.enableCache()
	for range 2 {
		got, c := cached.decode(line)
		if c != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("the caching decoder decodes %q differently (%v):\n%#v\n%#v", line, c, got, want)
		}
	}
}

// TestPlainPrefix checks the eight-bytes-at-a-time scan against a plain
// loop, with the first special byte at every offset and in every word
// position, and appendString, which uses it, against jsontext's quoting.
func TestPlainPrefix(t *testing.T) {
	plain := func(b []byte) int {
		for i, c := range b {
			if c < 0x20 || c == '"' || c == '\\' {
				return i
			}
		}
		return len(b)
	}
	base := []byte("abcdefghijklmnopqrstuvwxyz0123456789é€😀~\x7f !#")
	for _, special := range []byte{'"', '\\', 0x00, 0x1f, '\n', '\t'} {
		for at := 0; at <= len(base); at++ {
			b := append([]byte{}, base[:at]...)
			if at < len(base) {
				b = append(b, special)
				b = append(b, base[at:]...)
			}
			if got, want := plainPrefix(b), plain(b); got != want {
				t.Fatalf("plainPrefix(%q) = %d, want %d", b, got, want)
			}
			if got, want := plainPrefix(string(b)), plain(b); got != want {
				t.Fatalf("plainPrefix(string %q) = %d, want %d", b, got, want)
			}
			if !utf8.Valid(b) {
				continue // inserted inside a character
			}
			got := appendString(nil, string(b))
			var r reader
			r.reset(got, false)
			if s, err := r.str("s"); err != nil || s != string(b) || r.end() != nil {
				t.Fatalf("appendString(%q) = %s, which reads back as %q, %v", b, got, s, err)
			}
		}
	}
}
