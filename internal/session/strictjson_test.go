package session

import (
	"testing"
)

// TestStrictJSONDefaults pins what jsontext's defaults reject; the whole
// format's strictness rests on them.
func TestStrictJSONDefaults(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		valid      bool
	}{
		{"plain object", `{"a":1,"b":[true,null,"x"]}`, true},
		{"surrounding whitespace", " \t{\"a\":1} \r", true},
		{"surrogate pair", `"\ud83d\ude00"`, true},
		{"escaped NUL", `"\u0000"`, true},
		{"duplicate key", `{"a":1,"a":2}`, false},
		{"duplicate key, one escaped", `{"a":1,"\u0061":2}`, false},
		{"duplicate key deep", `[{"a":{"b":1,"b":1}}]`, false},
		{"escaped lone high surrogate", `"\ud800"`, false},
		{"escaped lone low surrogate", `"\udc00"`, false},
		{"high surrogate then non-surrogate", `"\ud800\u0041"`, false},
		{"two high surrogates", `"\ud800\ud800"`, false},
		{"raw lone surrogate (CESU bytes)", "\"\xed\xa0\x80\"", false},
		{"invalid UTF-8 in string", "\"\xff\"", false},
		{"truncated UTF-8 in string", "\"\xe2\x82\"", false},
		{"overlong UTF-8", "\"\xc0\xaf\"", false},
		{"invalid UTF-8 in key", "{\"\xfe\":1}", false},
		{"raw control character", "\"a\x01b\"", false},
		{"two values", `{} {}`, false},
		{"trailing comma", `[1,]`, false},
		{"leading zero", `01`, false},
		{"single quotes", `{'a':1}`, false},
		{"empty", ``, false},
	} {
		if got := validStrict([]byte(tc.text)); got != tc.valid {
			t.Errorf("%s: validStrict(%q) = %v, want %v", tc.name, tc.text, got, tc.valid)
		}
	}
}

func TestParseSafeInt(t *testing.T) {
	for _, tc := range []struct {
		lit string
		n   int64
		ok  bool
	}{
		{"0", 0, true},
		{"7", 7, true},
		{"9007199254740991", 9007199254740991, true},
		{"9007199254740992", 0, false},
		{"18446744073709551616", 0, false},
		{"1.0", 1, true}, // a JSON Schema integer
		{"1e2", 100, true},
		{"1E+2", 100, true},
		{"-0", 0, true},
		{"1.5", 0, false},
		{"-1", 0, false},
		{"1e400", 0, false},
		{"9007199254740991.0", 9007199254740991, true},
	} {
		n, ok := parseSafeInt([]byte(tc.lit))
		if n != tc.n || ok != tc.ok {
			t.Errorf("parseSafeInt(%s) = %d, %v; want %d, %v", tc.lit, n, ok, tc.n, tc.ok)
		}
	}
}

func TestIDPatterns(t *testing.T) {
	for id, want := range map[string]bool{
		"018f0000-0000-7000-8000-000000000001": true,
		"018f0000-0000-7abc-b000-00000000000f": true,
		"018F0000-0000-7000-8000-000000000001": false, // uppercase
		"018f0000-0000-4000-8000-000000000001": false, // v4
		"018f0000-0000-7000-c000-000000000001": false, // variant
		"018f0000-0000-7000-8000-00000000001":  false,
		"018f0000000070008000000000000001":     false,
	} {
		if got := isUUIDv7(id); got != want {
			t.Errorf("isUUIDv7(%s) = %v", id, got)
		}
	}
	if !isDigest(EmptyObjectDigest) || isDigest("sha256:"+string(make([]byte, 64))) || isDigest("sha512:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a") {
		t.Error("isDigest misjudges")
	}
}

// TestReaderWalksValidatedJSON checks the trusting scanner on values with
// every kind of token: skipping consumes exactly one value, strings come
// back unquoted.
func TestReaderWalksValidatedJSON(t *testing.T) {
	for _, text := range []string{
		`{"a":[1,-2.5e+3,true,false,null,{"b":"c\"}d"}],"e":"\\"}`,
		`"x\u00e9\ud83d\ude00"`,
		`[[[]],{}]`,
		`-0.0e-0`,
		` true `,
	} {
		var r reader
		if err := r.load([]byte(text)); err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		if err := r.skip(); err != nil {
			t.Fatalf("%s: skip: %v", text, err)
		}
		if err := r.end(); err != nil {
			t.Errorf("%s: skip did not consume the value: %v", text, err)
		}
	}
	var r reader
	if err := r.load([]byte(`{"k\u0069nd":"a\nb\"c"}`)); err != nil {
		t.Fatal(err)
	}
	if err := r.beginObject("x"); err != nil {
		t.Fatal(err)
	}
	if more, _ := r.more(); !more {
		t.Fatal("no member")
	}
	name, _ := r.name()
	if string(name) != "kind" {
		t.Errorf("name = %q", name)
	}
	if s, _ := r.str("v"); s != "a\nb\"c" {
		t.Errorf("value = %q", s)
	}
	if more, _ := r.more(); more {
		t.Error("a second member")
	}
	if r.end() != nil {
		t.Error("not at the end")
	}
}
