package session_test

import (
	"os"
	"runtime"
	"runtime/pprof"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/session"
)

func TestZZHeap(t *testing.T) {
	runtime.MemProfileRate = 4096
	path := os.Getenv("ZZ_FILE")
	f, _ := os.Open(path)
	fi, _ := f.Stat()
	st, c, err := session.ReduceReader(f, fi.Size())
	if err != nil || c != nil {
		t.Fatal(err, c)
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	text := 0
	for _, m := range st.Transcript {
		if m.Content != nil {
			text += len(*m.Content)
		}
	}
	t.Logf("file %d heap %d text %d msgs %d active %d facts %d", fi.Size(), ms.HeapAlloc, text, len(st.Transcript), len(st.ActiveContext), st.Facts)
	hf, _ := os.Create("/tmp/j17-heap.out")
	pprof.WriteHeapProfile(hf)
	hf.Close()
	runtime.KeepAlive(st)
}
