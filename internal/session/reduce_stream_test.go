package session

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"testing/iotest"
	"unsafe"

	"golang.org/x/sys/unix"
)

// reduceBoth reduces data whole and streamed (with a buffer of bufSize, so
// that lines longer than it are assembled) and fails unless both give the
// same result: the same state, or the same corruption at the same line
// and seq.
func reduceBoth(t testing.TB, data []byte, bufSize int) {
	t.Helper()
	want, wc := Reduce(data)
	var (
		lines   []byte // what the Line hook saw
		header  *Header
		nextNo  = 2
		factsIn int64
	)
	hooks := ReadHooks{
		Line:   func(l []byte) { lines = append(lines, l...) },
		Header: func(h Header) { header = &h },
		Transaction: func(lineNo int, facts []Fact) {
			if lineNo != nextNo {
				t.Fatalf("transaction hook at line %d, want %d", lineNo, nextNo)
			}
			nextNo++
			factsIn += int64(len(facts))
		},
	}
	r, n, gc, err := newReducerFromReader(iotest.HalfReader(bytes.NewReader(data)), int64(len(data)), bufSize, hooks)
	if err != nil {
		t.Fatal(err)
	}
	if gc == nil {
		st := r.State()
		if !bytes.Equal(lines, data[:st.RepairedLength]) || header == nil || *header != st.Header || factsIn != st.Facts {
			t.Fatalf("hooks saw %d bytes, header %v, %d facts; want %d bytes, %d facts", len(lines), header, factsIn, st.RepairedLength, st.Facts)
		}
		src := make([]RetainedMessage, len(st.Transcript))
		for i := range src {
			src[i] = RetainedMessage{SourceEntryID: st.TranscriptEntryIDs[i], Message: st.Transcript[i]}
		}
		if got, want := st.HistoryDigest(), SourceDigest(src); got != want {
			t.Fatalf("HistoryDigest %s, want %s", got, want)
		}
	} else if gc.Line > 1 && (header == nil || nextNo != gc.Line) {
		t.Fatalf("corruption at line %d, but hooks reached line %d", gc.Line, nextNo)
	}
	if gc == nil && n != int64(len(data)) {
		t.Fatalf("read %d of %d bytes", n, len(data))
	}
	var got *State
	if r != nil {
		got = r.State()
	}
	w, err := MarshalResult(want, wc)
	if err != nil {
		t.Fatal(err)
	}
	checkWriteState(t, want, wc, w)
	g, err := MarshalResult(got, gc)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(w, g) {
		t.Fatalf("streamed reduce differs:\n got %s\nwant %s", g, w)
	}
	if (wc == nil) != (gc == nil) || wc != nil && (wc.Seq != gc.Seq || wc.Detail != gc.Detail) {
		t.Fatalf("corruption %v, want %v", gc, wc)
	}
	if want != nil && (got.RepairedLength != want.RepairedLength || len(got.TranscriptEntryIDs) != len(want.TranscriptEntryIDs)) {
		t.Fatalf("repaired length %d, want %d", got.RepairedLength, want.RepairedLength)
	}
	reduceMapped(t, data, w, n)
	reduceLean(t, data, bufSize, want, wc)
}

// reduceMapped reduces data from a read-only mapping (ReadMapped, whose
// state aliases it, and again with Copy, whose state must not) and checks
// it against the streamed result: the same marshaled result and byte
// count.
func reduceMapped(t testing.TB, data []byte, want []byte, wantN int64) {
	t.Helper()
	if len(data) == 0 {
		return
	}
	m := readOnlyCopy(t, data)
	for _, copied := range []bool{false, true} {
		r, n, c, err := ReadMapped(m, ReadHooks{Copy: copied})
		if err != nil {
			t.Fatal(err)
		}
		if copied && r != nil {
			checkNothingAliases(t, r, m)
		}
		checkMapped(t, r, n, c, want, wantN)
	}
}

// readOnlyCopy returns data in a read-only mapping of its own, as a
// session file's mapping is: a write would fault.
func readOnlyCopy(t testing.TB, data []byte) []byte {
	t.Helper()
	m, err := unix.Mmap(-1, 0, len(data), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Munmap(m) })
	copy(m, data)
	if err := unix.Mprotect(m, unix.PROT_READ); err != nil {
		t.Fatal(err)
	}
	return m
}

// checkMapped checks a mapped read against the streamed result: the same
// marshaled result and byte count.
func checkMapped(t testing.TB, r *Reducer, n int64, c *Corruption, want []byte, wantN int64) {
	t.Helper()
	var st *State
	if r != nil {
		st = r.State()
	}
	got, err := MarshalResult(st, c)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) || c == nil && n != wantN {
		t.Fatalf("mapped reduce differs (%d bytes, want %d):\n got %s\nwant %s", n, wantN, got, want)
	}
}

// reduceLean reduces data streamed with ReleaseCompacted and checks it
// against the full reduce (want, wc): the same verdict, code, line and
// seq, and the same state but for the released text.
func reduceLean(t testing.TB, data []byte, bufSize int, want *State, wc *Corruption) {
	t.Helper()
	r, _, gc, err := newReducerFromReader(bytes.NewReader(data), int64(len(data)), bufSize, ReadHooks{ReleaseCompacted: true})
	if errors.Is(err, ErrReleasedTextNeeded) {
		return // the store reads such a file again in full
	}
	if err != nil {
		t.Fatal(err)
	}
	if (wc == nil) != (gc == nil) || wc != nil && (wc.Code != gc.Code || wc.Line != gc.Line || wc.Seq != gc.Seq || wc.Detail != gc.Detail) {
		t.Fatalf("lean corruption %v, want %v", gc, wc)
	}
	if gc != nil {
		return
	}
	got := r.State()
	if got.HistoryDigest() != want.HistoryDigest() {
		t.Fatal("lean HistoryDigest differs")
	}
	// What the lean state must equal: the full one with the text of the
	// released assistant and tool messages dropped.
	exp := *want
	exp.Transcript = slices.Clone(want.Transcript)
	for i := range got.Released {
		m := &exp.Transcript[i]
		if m.Role == RoleUser {
			continue
		}
		m.Content = nil
		m.ToolCalls = slices.Clone(m.ToolCalls)
		for j := range m.ToolCalls {
			m.ToolCalls[j].Function.Arguments = ""
		}
	}
	w, err := MarshalResult(&exp, nil)
	if err != nil {
		t.Fatal(err)
	}
	g, err := MarshalResult(got, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(w, g) {
		t.Fatalf("lean reduce differs beyond the released text:\n got %s\nwant %s", g, w)
	}
	if !slices.Equal(got.TranscriptEntryIDs, want.TranscriptEntryIDs) || !slices.Equal(got.ActiveEntryIDs, want.ActiveEntryIDs) {
		t.Fatal("lean reduce has other entry ids")
	}
	// Every compaction releases what it summarized: through the last
	// one's compacted entries.
	if n := len(want.ActiveEntryIDs); n > 0 && want.ActiveEntryIDs[0] == "" {
		if wantRel := len(want.Transcript) - (n - 1); got.Released != wantRel {
			t.Fatalf("released %d messages, want %d", got.Released, wantRel)
		}
	} else if got.Released != 0 {
		t.Fatalf("released %d messages of an uncompacted session", got.Released)
	}
}

// Every conformance fixture and scenario file reduces streamed exactly as
// whole: bad input keeps its code, line and seq.
func TestReduceReaderMatchesReduce(t *testing.T) {
	var files []string
	for _, dir := range []string{filepath.Join(sessionDir(t), "fixtures"), filepath.Join("testdata", "scenarios")} {
		m, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) < 37+7 {
		t.Fatalf("%d session files, want the 37 conformance sessions and the scenarios", len(files))
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(filepath.Base(f), func(t *testing.T) {
			for _, size := range []int{16, 100, 256 << 10} {
				reduceBoth(t, data, size)
				// A torn tail, and no final LF at all.
				reduceBoth(t, append(bytes.Clone(data), `{"kind":"entry"`...), size)
				reduceBoth(t, bytes.TrimSuffix(data, []byte("\n")), size)
			}
		})
	}
}

func FuzzReduceReader(f *testing.F) {
	f.Add([]byte("{}\n"))
	if files, _ := filepath.Glob(filepath.Join("testdata", "scenarios", "*.jsonl")); len(files) > 0 {
		for _, p := range files[:min(4, len(files))] {
			if data, err := os.ReadFile(p); err == nil {
				f.Add(data)
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		reduceBoth(t, data, 16)
	})
}

// A mapped session file cut short under the reader (someone truncated
// it) faults when the reader reaches the lost pages: that is an error of
// the read, not the end of the process.
func TestMappedFileCutShortIsAnError(t *testing.T) {
	fixture := readTestFile(t, filepath.Join(sessionDir(t), "fixtures", "invalid-reference.jsonl"))
	header := fixture[:bytes.IndexByte(fixture, '\n')+1]
	data := append(bytes.Clone(header), bytes.Repeat([]byte("x"), 1<<20)...)
	data = append(data, '\n')
	path := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := unix.Mmap(int(f.Fd()), 0, len(data), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(m)
	if err := f.Truncate(int64(os.Getpagesize())); err != nil {
		t.Fatal(err)
	}
	_, _, c, err := ReadMapped(m, ReadHooks{})
	if !errors.Is(err, ErrMappingFault) || c != nil {
		t.Fatalf("got %v, %v; want ErrMappingFault", c, err)
	}
}

// checkWriteState fails unless out, what WriteResult wrote, is byte for
// byte what json's reflection writes for the same result.
func checkWriteState(t testing.TB, st *State, c *Corruption, out []byte) {
	t.Helper()
	var ref bytes.Buffer
	if err := writeResultReflect(&ref, st, c); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out, ref.Bytes()) {
		t.Fatalf("WriteResult differs from json's output:\n got %s\nwant %s", out, ref.Bytes())
	}
}

// ReadMapped's Ahead hook gets the data in parts that start on multiples
// of aheadBlock (page boundaries: madvise refuses any other start), in
// order, each before the decoder reads into it, and together all of it.
func TestAheadPartsArePageAligned(t *testing.T) {
	data := []byte("{}\n")
	for len(data) < 3*aheadBlock+12345 {
		data = append(data, bytes.Repeat([]byte("x"), 999+len(data)%7)...)
		data = append(data, '\n')
	}
	var covered int
	lr := &lineReader{data: data, all: data, ahead: func(b []byte) {
		start := int(uintptr(unsafe.Pointer(&b[0])) - uintptr(unsafe.Pointer(&data[0])))
		if start%aheadBlock != 0 || start != covered {
			t.Fatalf("part at %d (covered %d)", start, covered)
		}
		covered += len(b)
	}}
	for {
		line, ok, _ := lr.next()
		if !ok {
			break
		}
		if end := int(uintptr(unsafe.Pointer(&line[0]))-uintptr(unsafe.Pointer(&data[0]))) + 1; end > covered {
			t.Fatalf("line at %d read before its part", end-1)
		}
	}
	if covered != len(data) {
		t.Fatalf("parts covered %d of %d bytes", covered, len(data))
	}
}
