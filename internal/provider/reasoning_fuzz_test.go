package provider

import (
	"bytes"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

// FuzzDetailMerger feeds streamed reasoning_details fragments (one chunk's
// array per line) to the merger: it never panics, its result is a valid
// JSON array, and a detail that arrived in one fragment is in it verbatim.
func FuzzDetailMerger(f *testing.F) {
	f.Add([]byte(`[{"type":"reasoning.text","text":"a","index":0}]` + "\n" + `[{"text":"b","index":0,"signature":"s"}]`))
	f.Add([]byte(`[{ "type" : "reasoning.encrypted", "data":"\u00e9", "index":1 }, 3, "x"]`))
	f.Add([]byte(`[{"index":0,"text":null}]` + "\n" + `[{"index":0,"text":"z","extra":{"a":[1]}}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var m detailMerger
		var frags []jsontext.Value
		for _, line := range bytes.Split(data, []byte("\n")) {
			for _, frag := range splitArray(line) {
				frags = append(frags, frag)
				m.add(frag)
			}
		}
		got := m.result()
		if len(frags) == 0 {
			if got != nil {
				t.Fatalf("result %s without fragments", got)
			}
			return
		}
		if got == nil {
			return // every fragment was invalid
		}
		if !got.IsValid() || got.Kind() != '[' {
			t.Fatalf("invalid result %s", got)
		}
		if len(frags) == 1 && frags[0].IsValid() && !bytes.Equal(got, append(append([]byte{'['}, frags[0]...), ']')) {
			t.Fatalf("single fragment %s changed to %s", frags[0], got)
		}
	})
}
