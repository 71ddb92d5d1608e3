package store

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/session"
	"github.com/tiny-agent/tiny-go/internal/session/sessiontest"
)

// ReadSession maps a regular file and streams anything else (a pipe):
// both give the state of session.Reduce, and the hooks see every line.
func TestReadSessionMappedOrStreamed(t *testing.T) {
	data := sessiontest.Generate(sessiontest.Options{Facts: 3000, Seed: 5, CompactEvery: 7})
	data = append(data, `{"kind":"entry"`...) // a torn tail
	want, c := session.Reduce(data)
	if c != nil {
		t.Fatal(c)
	}
	wantJSON, err := session.MarshalResult(want, nil)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	open := map[string]func(t *testing.T) *os.File{
		"file": func(t *testing.T) *os.File {
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			return f
		},
		"pipe": func(t *testing.T) *os.File {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			go func() {
				w.Write(data)
				w.Close()
			}()
			return r
		},
	}
	for name, open := range open {
		t.Run(name, func(t *testing.T) {
			f := open(t)
			defer f.Close()
			var lines []byte
			r, n, c, err := ReadSession(f, session.ReadHooks{Line: func(l []byte) { lines = append(lines, l...) }})
			if err != nil || c != nil {
				t.Fatal(err, c)
			}
			st := r.State()
			got, err := session.MarshalResult(st, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, wantJSON) || n != int64(len(data)) || !bytes.Equal(lines, data[:st.RepairedLength]) {
				t.Fatalf("state differs (%d bytes read of %d, hooks saw %d)", n, len(data), len(lines))
			}
			if name == "file" {
				if off, err := f.Seek(0, 1); err != nil || off != 0 {
					t.Fatalf("the file's offset moved to %d (%v)", off, err)
				}
			}
		})
	}
}
