package lsp

import (
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkEditToDiagnostics is the time from a file changed to the
// server's diagnostics of the change (Prepare before the write, the
// write, Check after it), for each server the tests use:
//
//	cold: the server starts for the change (a new Manager per edit);
//	warm: the server runs and has the file open; each edit puts the
//	      error in (timed) and takes it out again (not timed).
//
//	go test -run '^$' -bench EditToDiagnostics -benchtime 10x ./internal/lsp
func BenchmarkEditToDiagnostics(b *testing.B) {
	for _, name := range []string{"go", "python", "typescript"} {
		l := languages[name]
		b.Run(name+"/cold", func(b *testing.B) {
			needServer(b, l.program)
			for b.Loop() {
				b.StopTimer()
				dir := b.TempDir()
				writeFiles(b, dir, l.files)
				m := NewManager(Options{WorkDir: dir, Settings: patient()})
				b.StartTimer()
				mustReport(b, edit(b, m, filepath.Join(dir, l.file), l.bad), l.file)
				b.StopTimer()
				m.Close()
				b.StartTimer()
			}
		})
		b.Run(name+"/warm", func(b *testing.B) {
			needServer(b, l.program)
			dir := b.TempDir()
			writeFiles(b, dir, l.files)
			m := NewManager(Options{WorkDir: dir, Settings: patient()})
			defer m.Close()
			path := filepath.Join(dir, l.file)
			edit(b, m, path, l.clean) // started, the file open
			for b.Loop() {
				mustReport(b, edit(b, m, path, l.bad), l.file)
				b.StopTimer()
				if got := edit(b, m, path, l.clean); got != "" {
					b.Fatalf("the clean edit reported %s", got)
				}
				b.StartTimer()
			}
		})
	}
}

func mustReport(b *testing.B, got, file string) {
	if !strings.Contains(got, file+":4:") {
		b.Fatalf("no error for line 4: %q", got)
	}
}
