package session

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// A compactionStarted's id arrays decode to the same record whether or not
// the decoder knows the history they are expected to repeat (uuidsLike
// shares the history's array while they do), however they differ from it.
func TestUUIDsLikeHistory(t *testing.T) {
	id := func(i int) string { return fmt.Sprintf("0190c3d2-7f3e-7a1b-8c4d-%012x", i) }
	hist := make([]string, 10)
	for i := range hist {
		hist[i] = id(i + 1)
	}
	line := func(compacted, retained string) []byte {
		return []byte(`{"kind":"record","seq":5,"id":"` + id(100) + `","timestamp":1,"record":{"type":"compactionStarted","operationId":"` + id(101) +
			`","operationKind":"compaction","inputThroughEntryId":"` + id(10) + `","resultEntryId":"` + id(102) +
			`","compactedEntryIds":` + compacted + `,"retainedEntryIds":` + retained +
			`,"sourceDigest":"sha256:` + strings.Repeat("a", 64) + `"}}`)
	}
	list := func(ids ...string) string { return `["` + strings.Join(ids, `","`) + `"]` }
	cases := map[string][]byte{
		"the history":         line(list(hist[:7]...), list(hist[7:]...)),
		"nothing retained":    line(list(hist...), `[]`),
		"longer than history": line(list(append(hist[:10:10], id(11))...), `[]`),
		"differs midway":      line(list(hist[0], hist[1], id(50), hist[3]), list(hist[4:]...)),
		"retained differs":    line(list(hist[:5]...), list(hist[5], id(51))),
		"whitespace":          line(`[ "`+hist[0]+`" , "`+hist[1]+`" ]`, list(hist[2:]...)),
		"escaped character":   line(`["\u0030`+hist[0][1:]+`","`+hist[1]+`"]`, list(hist[2:]...)),
		"upper case":          line(list(strings.ToUpper(hist[0])), list(hist[1:]...)),
		"not a string":        line(`[1,"`+hist[1]+`"]`, `[]`),
		"truncated id":        line(`["`+hist[0][:35]+`"]`, `[]`),
		"empty":               line(`[]`, list(hist...)),
		"retained before": []byte(strings.Replace(string(line(list(hist[:3]...), list(hist[3:]...))),
			`"compactedEntryIds":`+list(hist[:3]...)+`,"retainedEntryIds":`+list(hist[3:]...),
			`"retainedEntryIds":`+list(hist[3:]...)+`,"compactedEntryIds":`+list(hist[:3]...), 1)),
		"duplicate in history": line(list(hist[0], hist[0]), list(hist[2:]...)),
	}
	for name, l := range cases {
		t.Run(name, func(t *testing.T) {
			var plain, known txDecoder
			known.hist = hist
			want, wc := plain.decode(l)
			got, gc := known.decode(l)
			if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(gc, wc) {
				t.Fatalf("with the history: %v %v\nwithout: %v %v", got, gc, want, wc)
			}
			valid := !strings.Contains("upper case/not a string/truncated id/empty", name)
			if (wc == nil) != valid {
				t.Fatalf("corruption %v; want valid %v", wc, valid)
			}
			if name == "the history" && &got[0].Record.(*CompactionStarted).CompactedEntryIDs[0] != &hist[0] {
				t.Fatal("the ids that repeat the history were copied")
			}
		})
	}
}
