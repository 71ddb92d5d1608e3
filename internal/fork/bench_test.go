package fork

import (
	"os"
	"testing"
	"time"

	"github.com/tiny-agent/tiny-go/internal/session/sessiontest"
	"github.com/tiny-agent/tiny-go/internal/store"
	"github.com/tiny-agent/tiny-go/internal/store/storetest"
)

// BenchmarkWrite measures forking a whole session (Write at -1: every
// line copied, the copy reduced as it is read) against the json.Valid
// floor in the same run. Each fork is removed after it is written. See
// sessiontest.BenchFile for the file.
func BenchmarkWrite(b *testing.B) {
	src, runs := sessiontest.BenchFile(b)
	cwd, id := storetest.InstallSession(b, src)
	path, err := store.PathByID(cwd, id)
	if err != nil {
		b.Fatal(err)
	}
	sessiontest.BenchReaders(b, src, runs, sessiontest.Reader{Name: "fork", Read: func(b *testing.B) {
		res, err := Write(path, -1, "", 0, time.Now())
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		os.Remove(res.Path)
		if dir, err := store.SidecarDir(res.Path, false); err == nil && dir != "" {
			os.RemoveAll(dir)
		}
		b.StartTimer()
	}})
}
