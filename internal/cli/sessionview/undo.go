package sessionview

import (
	"fmt"
	"io"

	"github.com/tiny-agent/tiny-go/internal/checkpoint"
	"github.com/tiny-agent/tiny-go/internal/cli/rewindcmd"
	"github.com/tiny-agent/tiny-go/internal/cli/sessioncmd"
	"github.com/tiny-agent/tiny-go/internal/fork"
	"github.com/tiny-agent/tiny-go/internal/session"
	"github.com/tiny-agent/tiny-go/internal/store"
)

// forkOrigins is the FORK OF column of `session list`: present only when
// one of the listed sessions is a fork, so listings without forks keep
// their shape.
type forkOrigins map[string]string

func forkColumn(sums []store.Summary) forkOrigins {
	out := forkOrigins{}
	for _, s := range sums {
		if o, err := fork.ReadOrigin(s.Path); err == nil && o != nil {
			out[s.ID] = fmt.Sprintf("%s@%d", o.Source, o.At)
		}
	}
	return out
}

func (f forkOrigins) header() string {
	if len(f) == 0 {
		return ""
	}
	return "\tFORK OF"
}

// writeUndoInfo ends `session show`: where a fork came from, and the
// session's checkpoints with the store's cap and eviction rule.
// undoPromptRunes is the width of a prompt in the list of user turns.
const undoPromptRunes = 60

func writeUndoInfo(w io.Writer, path string, st *session.State, turns []rewindcmd.Turn, getenv func(string) string) {
	if o, err := fork.ReadOrigin(path); err != nil {
		fmt.Fprintf(w, "fork origin unreadable: %v\n", err)
	} else if o != nil {
		s := fmt.Sprintf("forked from session %s at seq %d", o.Source, o.At)
		if o.Turn > 0 {
			s += fmt.Sprintf(" (a conversation rewind to before turn %d)", o.Turn)
		}
		fmt.Fprintln(w, s+" on "+sessioncmd.FormatMillis(o.CreatedAt))
	}
	dir, err := store.SidecarDir(path, false)
	if err != nil {
		return
	}
	if len(turns) > 0 {
		fmt.Fprintln(w, "user turns (tiny-go session rewind <id> --turn N):")
		for _, t := range turns {
			fmt.Fprintf(w, "  %d  #%d  %s\n", t.N, t.Seq, store.OneLine(t.Prompt, undoPromptRunes))
		}
	}
	recs, err := checkpoint.ReadIndexFile(dir + "/" + checkpoint.IndexFile)
	if err != nil {
		fmt.Fprintf(w, "checkpoints: unreadable: %v\n", err)
		return
	}
	if len(recs) == 0 {
		return
	}
	var effects, missing, rewinds int
	var bytes int64
	for _, r := range recs {
		bytes += r.Bytes
		if r.Phase != checkpoint.PhaseBefore {
			continue
		}
		switch {
		case r.Rewind != "":
			rewinds++
		case r.Missing != "":
			missing++
			effects++
		default:
			effects++
		}
	}
	fmt.Fprintf(w, "checkpoints: %d effects (%d without a snapshot), %d rewinds, %s added to the store\n",
		effects, missing, rewinds, formatSize(bytes))
	if st != nil {
		if info, err := checkpoint.Stat(rewindcmd.SessionCwd(path), capOrDefault(getenv)); err == nil {
			fmt.Fprintf(w, "checkpoint store %s: %s of %s cap (%s); %s\n", info.Dir, formatSize(info.Size), formatSize(info.Cap), info.Mode, checkpoint.EvictionRule)
			if info.DroppedBefore > 0 {
				fmt.Fprintf(w, "checkpoints taken before %s were dropped to stay under the cap\n", sessioncmd.FormatMillis(info.DroppedBefore))
			}
		}
	}
}

func capOrDefault(getenv func(string) string) int64 {
	n, _ := rewindcmd.CheckpointCap(getenv)
	return n
}
