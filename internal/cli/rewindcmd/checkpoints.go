package rewindcmd

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/tiny-agent/tiny-go/internal/store"
)

// CheckpointCap reads TINY_CHECKPOINT_CAP: bytes, or a number with a
// KiB/MiB/GiB suffix; 0 or unset means the default.
func CheckpointCap(getenv func(string) string) (int64, error) {
	v := strings.TrimSpace(getenv("TINY_CHECKPOINT_CAP"))
	if v == "" {
		return 0, nil
	}
	mult := int64(1)
	for _, s := range []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}} {
		if n, ok := strings.CutSuffix(v, s.suffix); ok {
			v, mult = strings.TrimSpace(n), s.mult
			break
		}
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("TINY_CHECKPOINT_CAP=%s is not a size (bytes, or a number with KiB, MiB or GiB)", getenv("TINY_CHECKPOINT_CAP"))
	}
	return n * mult, nil
}

// SidecarAppender appends each write to a file of a session's sidecar
// directory, opening it for that write only (no descriptor to close).
type SidecarAppender struct {
	// SessionPath is the session file, Name the file in its sidecar.
	SessionPath, Name string
}

// Write appends p to the file, cutting off a partial line on error.
func (w SidecarAppender) Write(p []byte) (int, error) {
	dir, err := store.SidecarDir(w.SessionPath, true)
	if err != nil {
		return 0, err
	}
	f, err := store.OpenSidecarFile(dir, w.Name, os.O_WRONLY|os.O_APPEND|os.O_CREATE)
	if err != nil {
		return 0, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return 0, err
	}
	n, err := f.Write(p)
	if err != nil && n > 0 {
		// A full disk took part of the line: cut it off, or the next
		// append would glue a whole line to it and the index would no
		// longer read (every rewind of the session refused).
		if terr := f.Truncate(fi.Size()); terr == nil {
			n = 0
		}
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return n, err
}
