package hooks

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// The transcript kept up to date line by line, as a session grows between
// hooks, is byte for byte the one derived from the whole session at once.
func TestTranscriptGrowsWithTheSession(t *testing.T) {
	for _, name := range []string{"completed-tool-run", "completed-compaction"} {
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("..", "..", "..", "shared", "conformance", "session", "fixtures", name+".jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			want, err := ClaudeTranscript(data, "sid", "/w")
			if err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(t.TempDir(), ".tiny-agent", "sessions")
			if err := os.MkdirAll(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, "s.jsonl")
			tr := &transcript{session: path}
			var grown []byte
			for line := range bytes.Lines(data) {
				grown = append(grown, line...)
				// A torn tail first: nothing of it may count.
				if err := os.WriteFile(path, append(bytes.Clone(grown), `{"torn`...), 0o600); err != nil {
					t.Fatal(err)
				}
				if _, err := tr.Path("sid", "/w"); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, grown, 0o600); err != nil {
					t.Fatal(err)
				}
				if _, err := tr.Path("sid", "/w"); err != nil {
					t.Fatal(err)
				}
			}
			got, err := os.ReadFile(tr.out)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("grown:\n%s\nwhole:\n%s", got, want)
			}
		})
	}
}
