package store

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/session"
)

func TestHeadsReadOnlyHeaders(t *testing.T) {
	cwd := t.TempDir()
	s := createStore(t, cwd, Options{})
	commitRun(t, s, "first")
	s.Close()
	full := readFile(t, s.Path())
	header, _, _ := bytes.Cut(full, []byte{'\n'})
	dir := filepath.Dir(s.Path())
	write := func(name string, data []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// A header-only session with a torn tail; one with no complete
	// header; one whose header names another id.
	other := "018f0000-0000-7000-8000-0000000000aa"
	own := bytes.Replace(header, []byte(s.ID()), []byte(other), 1)
	write("2999-01-01T00-00-00-000Z_"+other+".jsonl", append(own, "\n{\"torn"...))
	bad := "018f0000-0000-7000-8000-0000000000bb"
	write("2998-01-01T00-00-00-000Z_"+bad+".jsonl", header)
	mism := "018f0000-0000-7000-8000-0000000000cc"
	write("1999-01-01T00-00-00-000Z_"+mism+".jsonl", append(bytes.Clone(header), '\n'))

	heads, err := Heads(cwd)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, h := range heads {
		code := ""
		if h.Corruption != nil {
			code = h.Corruption.Code
		}
		got = append(got, h.ID[len(h.ID)-2:]+" "+code+" "+map[bool]string{true: "lines", false: "header"}[h.Lines])
	}
	// Ordered as List orders: the header's date, else the name's. The
	// torn-tail session has the real one's date (and sorts after it by
	// id).
	want := []string{"bb " + session.CorruptMissingHeader + " header", s.ID()[len(s.ID())-2:] + "  lines", "aa  header", "cc " + session.CorruptInvalidHeader + " header"}
	list, err := List(cwd)
	if err != nil {
		t.Fatal(err)
	}
	for i, sum := range list {
		if sum.ID != heads[i].ID || !sum.Started.Equal(heads[i].Started) {
			t.Fatalf("List has %s at %d (%v), Heads %s (%v)", sum.ID, i, sum.Started, heads[i].ID, heads[i].Started)
		}
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("heads %q\nwant  %q", got, want)
	}
}

// lastLineEnd and lineStart read in chunks what the whole-file repair
// found in memory.
func TestRepairOffsetsAcrossChunks(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 50 {
		data := make([]byte, r.IntN(300<<10))
		for i := range data {
			if r.IntN(5000) == 0 {
				data[i] = '\n'
			} else {
				data[i] = 'x'
			}
		}
		end, err := lastLineEnd(bytes.NewReader(data), int64(len(data)))
		if err != nil || end != int64(bytes.LastIndexByte(data, '\n')+1) {
			t.Fatalf("lastLineEnd %d, %v; want %d", end, err, bytes.LastIndexByte(data, '\n')+1)
		}
		lines := bytes.Count(data, []byte{'\n'})
		for _, n := range []int{1, 2, lines / 2, lines, lines + 1, lines + 2} {
			want := int64(0)
			for i, off := 1, 0; i < n; i++ {
				j := bytes.IndexByte(data[off:], '\n')
				if j < 0 {
					off = len(data)
					want = int64(off)
					break
				}
				off += j + 1
				want = int64(off)
			}
			if got, err := lineStart(bytes.NewReader(data), n); err != nil || got != want {
				t.Fatalf("lineStart(%d) = %d, %v; want %d", n, got, err, want)
			}
		}
	}
}
