package fork

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tiny-agent/tiny-go/internal/reasoning"
	"github.com/tiny-agent/tiny-go/internal/recovery"
	"github.com/tiny-agent/tiny-go/internal/session"
	"github.com/tiny-agent/tiny-go/internal/store"
)

// sessionFiles are valid multi-transaction sessions written by runtimes:
// the reducer's scenario fixtures.
func sessionFiles(t *testing.T) []string {
	files, err := filepath.Glob("../session/testdata/scenarios/*.jsonl")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenario sessions: %v", err)
	}
	return files
}

// prefixAt is the source's committed bytes up to the transaction ending at
// seq at, found independently of Prefix: by reducing growing prefixes.
func prefixAt(t *testing.T, data []byte, at int64) []byte {
	t.Helper()
	off := 0
	for {
		i := bytes.IndexByte(data[off:], '\n')
		if i < 0 {
			t.Fatalf("seq %d not found", at)
		}
		off += i + 1
		st, c := session.Reduce(data[:off])
		if c == nil && st.Facts == at {
			return data[:off]
		}
	}
}

// CheckForkAtEverySeq forks data at every seq and checks that each fork
// reduces and plans like the source's prefix, and that seqs inside a
// transaction are refused.
func CheckForkAtEverySeq(t *testing.T, data []byte) {
	t.Helper()
	src, c := session.Reduce(data)
	if c != nil {
		t.Fatalf("source corrupt: %v", c)
	}
	bounds, err := Boundaries(data)
	if err != nil {
		t.Fatal(err)
	}
	isBound := map[int64]bool{}
	for _, b := range bounds {
		isBound[b] = true
	}
	newID, _ := store.NewID()
	current := recovery.Current{EnvironmentIdentity: src.Header.EnvironmentIdentity}
	for at := int64(0); at <= src.Facts; at++ {
		out, err := Prefix(data, at, newID)
		if !isBound[at] {
			if err == nil || !strings.Contains(err.Error(), "inside a transaction") {
				t.Fatalf("seq %d inside a transaction: err %v", at, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("fork at %d: %v", at, err)
		}
		want := prefixAt(t, data, at)
		got, c := session.Reduce(out)
		if c != nil {
			t.Fatalf("fork at %d does not reduce: %v", at, c)
		}
		ref, _ := session.Reduce(want)
		if got.Header.ID != newID {
			t.Fatalf("fork header id %s", got.Header.ID)
		}
		got.Header.ID = ref.Header.ID
		got.RepairedLength = ref.RepairedLength + int64(len(want)-len(out)) // the id may differ in length only if escaped
		if !reflect.DeepEqual(got, ref) {
			t.Fatalf("fork at %d reduces differently", at)
		}
		gotPlan, refPlan := recovery.Plan(got, current), recovery.Plan(ref, current)
		if !reflect.DeepEqual(gotPlan, refPlan) {
			t.Fatalf("fork at %d plans %#v, the prefix %#v", at, gotPlan, refPlan)
		}
		// Everything but the id is byte-identical.
		if !bytes.Equal(bytes.Replace(out, []byte(newID), []byte(src.Header.ID), 1), want) {
			t.Fatalf("fork at %d is not byte-identical to the prefix", at)
		}
	}
}

func TestForkAtEverySeqOfScenarios(t *testing.T) {
	for _, f := range sessionFiles(t) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if _, c := session.Reduce(data); c != nil {
			continue // a corruption scenario
		}
		t.Run(filepath.Base(f), func(t *testing.T) { CheckForkAtEverySeq(t, data) })
	}
}

func TestForkRefusesBadPoints(t *testing.T) {
	data, err := os.ReadFile(sessionFiles(t)[0])
	if err != nil {
		t.Fatal(err)
	}
	st, _ := session.Reduce(data)
	id, _ := store.NewID()
	if _, err := Prefix(data, st.Facts+1, id); err == nil || !strings.Contains(err.Error(), "not in the session") {
		t.Fatalf("past the end: %v", err)
	}
	if _, err := Prefix(data, -1, "not-an-id"); err == nil {
		t.Fatal("bad id accepted")
	}
	// A torn tail is not part of a fork.
	torn := append(append([]byte{}, data...), `{"kind":"record"`...)
	out, err := Prefix(torn, -1, id)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(out, []byte(`{"kind":"record"`+"\n")) || !bytes.HasSuffix(out, []byte("\n")) {
		t.Fatal("torn tail copied")
	}
}

func TestWriteLeavesSourceAndRecordsOrigin(t *testing.T) {
	cwd := t.TempDir()
	data, err := os.ReadFile(sessionFiles(t)[0])
	if err != nil {
		t.Fatal(err)
	}
	src, _ := session.Reduce(data)
	dir := store.SessionsDir(cwd)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(cwd, ".tiny-agent"), 0o700); err != nil {
		t.Fatal(err)
	}
	srcPath := filepath.Join(dir, store.FileName(time.UnixMilli(src.Header.CreatedAt), src.Header.ID))
	if err := os.WriteFile(srcPath, data, 0o600); err != nil {
		t.Fatal(err)
	}
	res, err := Write(srcPath, -1, "", 0, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := os.ReadFile(srcPath); !bytes.Equal(again, data) {
		t.Fatal("source changed")
	}
	o, err := ReadOrigin(res.Path)
	if err != nil || o == nil || o.Source != src.Header.ID || o.At != src.Facts {
		t.Fatalf("origin %+v %v", o, err)
	}
	if _, fdata, err := store.ReadByID(cwd, res.ID); err != nil || !bytes.HasSuffix(fdata, data[bytes.IndexByte(data, '\n'):]) {
		t.Fatalf("fork not readable by id: %v", err)
	}
	if o, _ := ReadOrigin(srcPath); o != nil {
		t.Fatal("source has an origin")
	}
	fi, _ := os.Stat(res.Path)
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", fi.Mode())
	}
}

// FuzzPrefix: whatever the bytes, Prefix either refuses or returns a
// session that reduces, whose header id is the new one.
func FuzzPrefix(f *testing.F) {
	for _, p := range []string{"completed-tool-run.jsonl", "parallel-tool-calls.jsonl"} {
		if data, err := os.ReadFile(filepath.Join("../session/testdata/scenarios", p)); err == nil {
			f.Add(data, int64(-1))
			f.Add(data, int64(3))
		}
	}
	f.Add([]byte(`{"kind":"header","version":2,"id":"x"}`+"\n"), int64(0))
	id := "01900000-0000-7000-8000-000000000000"
	f.Fuzz(func(t *testing.T, data []byte, at int64) {
		out, err := Prefix(data, at, id)
		ref, rerr := prefixRef(data, at, id)
		if (err == nil) != (rerr == nil) || !bytes.Equal(out, ref) {
			t.Fatalf("streamed fork: %v, %q; whole-file fork: %v, %q", err, out, rerr, ref)
		}
		if err != nil {
			return
		}
		st, c := session.Reduce(out)
		if c != nil || st.Header.ID != id {
			t.Fatalf("fork does not reduce or keeps the old id: %v", c)
		}
	})
}

// TestForkInheritsReasoningOfSharedEntries: a fork sends back the
// reasoning details of the assistant entries it shares with its source,
// and only those.
func TestForkInheritsReasoningOfSharedEntries(t *testing.T) {
	cwd := t.TempDir()
	var data []byte
	var assistants []session.Fact // with the seq of each
	for _, p := range sessionFiles(t) {
		d, _ := os.ReadFile(p)
		assistants = assistants[:0]
		for _, line := range bytes.Split(d, []byte("\n"))[1:] {
			facts, _ := session.DecodeTransaction(line)
			for _, f := range facts {
				if _, ok := f.Entry.(*session.AssistantEntry); ok {
					assistants = append(assistants, f)
				}
			}
		}
		if len(assistants) >= 2 {
			data = d
			break
		}
	}
	if data == nil {
		t.Skip("no scenario with two assistant entries")
	}
	src, _ := session.Reduce(data)
	dir := store.SessionsDir(cwd)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	os.Chmod(filepath.Join(cwd, ".tiny-agent"), 0o700)
	srcPath := filepath.Join(dir, store.FileName(time.UnixMilli(src.Header.CreatedAt), src.Header.ID))
	if err := os.WriteFile(srcPath, data, 0o600); err != nil {
		t.Fatal(err)
	}
	rs, err := reasoning.Open(srcPath, "a", "m", false)
	if err != nil {
		t.Fatal(err)
	}
	first, second := assistants[0], assistants[1]
	for _, f := range []session.Fact{first, second} {
		if err := rs.Put(f.ID, jsontext.Value(`[{"type":"reasoning.encrypted","data":"`+f.ID+`"}]`)); err != nil {
			t.Fatal(err)
		}
	}
	rs.Close()
	// At the first assistant entry's seq: its details come along, the
	// second's do not.
	bounds, err := Boundaries(data)
	if err != nil {
		t.Fatal(err)
	}
	at := int64(-1)
	for _, b := range bounds {
		if b >= first.Seq {
			at = b
			break
		}
	}
	if at < 0 || at >= second.Seq {
		t.Skip("the two assistant entries are in one transaction")
	}
	res, err := Write(srcPath, at, "", 0, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	got, err := reasoning.Open(res.Path, "a", "m", false)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Close()
	if d := got.Details(first.ID); !bytes.Contains(d, []byte(first.ID)) {
		t.Fatalf("fork lost the details of a shared entry: %s", d)
	}
	if d := got.Details(second.ID); d != nil {
		t.Fatalf("fork got details of an entry it does not have: %s", d)
	}
}
