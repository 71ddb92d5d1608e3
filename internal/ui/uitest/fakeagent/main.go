// Command fakeagent runs the interactive UI against uitest.Engine, for
// terminal tests (tmux) of the real program.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/tiny-agent/tiny-go/internal/ui"
	"github.com/tiny-agent/tiny-go/internal/ui/uitest"
)

func main() {
	delay := flag.Duration("delay", 60*time.Millisecond, "time between streamed words")
	toolTime := flag.Duration("tool", 30*time.Second, "duration of the fake tool")
	session := flag.String("session", "0197a5d2-0000-7000-8000-000000000001", "session id shown")
	dir := flag.String("dir", "", "working directory whose input history is kept (none if empty)")
	flag.Parse()

	obs := ui.NewObserver("")
	eng := &uitest.Engine{Events: obs.Event, Delay: *delay, ToolTime: *toolTime, LongWords: 400}
	err := ui.Run(context.Background(), ui.Options{
		Engine:   eng,
		History:  history(*dir),
		Observer: obs,
		Banner: ui.Banner{
			Provider:    "fake",
			Endpoint:    "http://127.0.0.1:0/v1",
			Model:       "fake/model",
			SessionID:   *session,
			SessionPath: "/tmp/fake/" + *session + ".jsonl",
			Tools:       []string{"bash", "read", "write", "edit", "bg"},
		},
		ExpandSkill: func(input string) (string, error) {
			name, text, _ := strings.Cut(strings.TrimPrefix(input, "/skill:"), " ")
			if name != "demo" {
				return "", unknownSkill(name)
			}
			return "Demo skill.\n\nUser: " + text, nil
		},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "fakeagent:", err)
		os.Exit(1)
	}
}

func history(dir string) *ui.History {
	if dir == "" {
		return nil
	}
	return ui.NewHistory(dir)
}

// unknownSkill is the error of an unknown /skill: name.
type unknownSkill string

func (u unknownSkill) Error() string { return "Unknown skill: " + string(u) }
