package overlay

import (
	"path/filepath"
	"testing"
)

func FuzzParseJournal(f *testing.F) {
	f.Add([]byte(`{"tree":"/w","changes":[{"path":"a/b","kind":"put","had":true},{"path":".","kind":"chmod","mode":493,"old":448}]}`))
	f.Add([]byte(`{"changes":[{"path":"../x","kind":"delete"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		j, err := parseJournal(data)
		if err != nil {
			return
		}
		for _, c := range j.Changes {
			if c.Path != "." && !filepath.IsLocal(c.Path) {
				t.Fatalf("accepted a path leaving the tree: %q", c.Path)
			}
		}
	})
}
