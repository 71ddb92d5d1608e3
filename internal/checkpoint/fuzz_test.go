package checkpoint

import (
	"bytes"
	"testing"
)

// FuzzReadIndex: any bytes either parse into records that encode back to
// the same records, or fail with an error; a torn last line never fails.
func FuzzReadIndex(f *testing.F) {
	f.Add([]byte(`{"toolStartedId":"a","tool":"bash","phase":"before","at":1,"tree":"plain:sha256:00"}` + "\n"))
	f.Add([]byte(`{"rewind":"r","phase":"after","at":2,"files":[{"path":"x","absent":true}]}` + "\n{\"phase\":"))
	f.Add([]byte("\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		recs, err := ReadIndex(bytes.NewReader(data))
		if err != nil {
			return
		}
		var buf bytes.Buffer
		if err := AppendRecords(&buf, recs...); err != nil {
			t.Fatal(err)
		}
		again, err := ReadIndex(&buf)
		if err != nil || len(again) != len(recs) {
			t.Fatalf("round trip: %v, %d records, want %d", err, len(again), len(recs))
		}
	})
}
