package cli

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/checkpoint"
	"github.com/tiny-agent/tiny-go/internal/store"
)

// checkpointHook returns the agent's BeforeEffect: a checkpoint before and
// after every effect of a tool call, recorded in the session's sidecar
// checkpoints.jsonl. TINY_CHECKPOINTS=off turns it off; a store that
// cannot be opened turns it off with one line on stderr (the run goes on).
func (a *runner) checkpointHook() agent.BeforeEffect {
	a.recorder = nil
	return a.lsp.before(a.checkpointOnly())
}

func (a *runner) checkpointOnly() agent.BeforeEffect {
	if strings.EqualFold(strings.TrimSpace(a.io.getenv("TINY_CHECKPOINTS")), "off") {
		return nil
	}
	capBytes, err := checkpointCap(a.io.getenv)
	if err != nil {
		fmt.Fprintf(a.io.stderr, "tiny-go: checkpoints are off: %v\n", err)
		return nil
	}
	cs := a.checkpoints
	if cs == nil {
		cs, err = checkpoint.Open(a.cwd, checkpoint.Options{Cap: capBytes, TxLayers: strings.TrimSpace(a.io.getenv("TINY_OVERLAY_LAYERS"))})
		if err != nil {
			fmt.Fprintf(a.io.stderr, "tiny-go: checkpoints are off: %v\n", err)
			return nil
		}
		// Watches and the first full snapshot are set up on the first
		// effect that needs a whole-tree snapshot: a run without one
		// never walks the tree.
		stderr := a.io.stderr
		cs.TrackLazily(func(line string) { fmt.Fprintln(stderr, line) })
		a.checkpoints = cs
	}
	rec := checkpoint.NewRecorder(cs, sidecarAppender{sessionPath: a.store.Path(), name: checkpoint.IndexFile})
	a.recorder = rec
	stderr := a.io.stderr
	a.enableTx(rec, func(line string) { fmt.Fprintln(stderr, line) })
	return rec.BeforeEffect
}

// checkpointCap reads TINY_CHECKPOINT_CAP: bytes, or a number with a
// KiB/MiB/GiB suffix; 0 or unset means the default.
func checkpointCap(getenv func(string) string) (int64, error) {
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

// sidecarAppender appends each write to a file of a session's sidecar
// directory, opening it for that write only (no descriptor to close).
type sidecarAppender struct {
	sessionPath, name string
}

func (w sidecarAppender) Write(p []byte) (int, error) {
	dir, err := store.SidecarDir(w.sessionPath, true)
	if err != nil {
		return 0, err
	}
	f, err := store.OpenSidecarFile(dir, w.name, os.O_WRONLY|os.O_APPEND|os.O_CREATE)
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
