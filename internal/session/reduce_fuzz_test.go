package session

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzReduce checks, for any file: Reduce never panics; its printed
// result (state or corruption) validates against
// expected-state.schema.json; the one-pass strict decoding of every line
// agrees with jsontext; and for a valid file, re-encoding every
// decoded line gives a file that reduces to the same state.
func FuzzReduce(f *testing.F) {
	for _, dir := range fuzzSeedDirs(f) {
		files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
		for _, file := range files {
			data, _ := os.ReadFile(file)
			f.Add(data)
		}
	}
	_, expectSchema := loadSchemas(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, line := range bytes.Split(data, []byte("\n")) {
			checkStrictAgrees(t, line)
		}
		st, c := Reduce(data)
		if (st == nil) == (c == nil) {
			t.Fatalf("Reduce returned state %v and corruption %v", st != nil, c)
		}
		out, err := MarshalResult(st, c)
		if err != nil {
			t.Fatal(err)
		}
		if err := validateJSON(expectSchema, out); err != nil {
			t.Fatalf("result does not validate: %v\n%s", err, out)
		}
		checkWriteState(t, st, c, out)
		if c != nil {
			return
		}
		lines := bytes.Split(data[:st.RepairedLength-1], []byte("\n"))
		again := append(bytes.Clone(lines[0]), '\n')
		for _, line := range lines[1:] {
			tx, c := DecodeTransaction(line)
			if c != nil {
				t.Fatalf("a line of a valid file does not decode: %v", c)
			}
			enc, err := EncodeTransaction(tx)
			if err != nil {
				t.Fatal(err)
			}
			again = append(again, enc...)
		}
		st2, c := Reduce(again)
		if c != nil {
			t.Fatalf("the re-encoded file is corrupt: %v", c)
		}
		st2.RepairedLength = st.RepairedLength
		a, _ := MarshalState(st)
		b, _ := MarshalState(st2)
		if !bytes.Equal(a, b) {
			t.Fatalf("the re-encoded file reduces differently:\n%s\n%s", a, b)
		}
	})
}
