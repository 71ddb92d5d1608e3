package store

import (
	"bytes"
	"crypto/sha256"
	"testing"
)

// FuzzVerify: any records file and any session bytes are judged without a
// panic; records that are the real digests of the data's line prefixes
// always verify, the check streamed within the reducer's pass agrees with
// Verify, and a verified length is always a line boundary the
// records vouched for.
func FuzzVerify(f *testing.F) {
	f.Add([]byte("a\nbb\n"), []byte("2 00\n"), true)
	f.Add([]byte("header\nline\n"), []byte(""), true)
	f.Add([]byte("x\n"), []byte("1 "+string(bytes.Repeat([]byte("0"), 64))+"\n5 zz"), false)
	f.Fuzz(func(t *testing.T, data, records []byte, honest bool) {
		committed := int64(bytes.LastIndexByte(data, '\n') + 1)
		if honest {
			records = nil
			h := sha256.New()
			var pos int64
			for pos < committed {
				end := pos + int64(bytes.IndexByte(data[pos:], '\n')) + 1
				h.Write(data[pos:end])
				r := record{size: end}
				h.Sum(r.digest[:0])
				records = append(records, r.line()...)
				pos = end
			}
		}
		verified, c := Verify(data, committed, records)
		// The check that runs within the reducer's pass, fed the same
		// committed lines, finds the same corruption at the same line.
		k := newIntegrityCheck(records)
		for rest := data[:committed]; len(rest) > 0; {
			i := bytes.IndexByte(rest, '\n') + 1
			k.Line(rest[:i])
			rest = rest[i:]
		}
		if kc, err := k.Result(); err != nil || (kc == nil) != (c == nil) || c != nil && (kc.Code != c.Code || kc.Line != c.Line) {
			t.Fatalf("streamed check %v (%v), Verify %v", kc, err, c)
		}
		if honest && c != nil {
			t.Fatalf("honest records refused: %v", c)
		}
		if verified < 0 || verified > committed || (verified > 0 && data[verified-1] != '\n') {
			t.Fatalf("verified %d of %d", verified, committed)
		}
	})
}
