package watch

import (
	"errors"
	"runtime"
	"testing"
)

// Where there is no inotify (macOS, or TINY_INOTIFY=off on Linux), Start
// refuses with ErrNoInotify and places no watch.
func TestStartWithoutInotify(t *testing.T) {
	if runtime.GOOS == "linux" {
		t.Setenv("TINY_INOTIFY", "off")
	}
	tr, err := Start(t.TempDir(), t.TempDir(), Options{})
	if tr != nil {
		tr.Close()
	}
	if !errors.Is(err, ErrNoInotify) {
		t.Fatalf("Start: %v, want ErrNoInotify", err)
	}
}
