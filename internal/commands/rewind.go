package commands

import (
	"fmt"
	"strconv"
	"strings"
)

// RewindUsage is the one line that says how /rewind is called.
const RewindUsage = "Usage: /rewind [N [files|conversation] [force] [details]]"

// RewindArgs are the arguments of /rewind N [files|conversation] [force].
type RewindArgs struct {
	Turn         int
	Files        bool
	Conversation bool
	Force        bool
	// Details lists every path of a files rewind, git's own included;
	// without it the preview says what changes in a user's words.
	Details bool
}

// ParseRewind reads the arguments of /rewind for every frontend; list is
// true for none (show the turns).
func ParseRewind(args string) (a RewindArgs, list bool, err error) {
	fields := strings.Fields(args)
	if len(fields) == 0 {
		return a, true, nil
	}
	n, err := strconv.Atoi(fields[0])
	if err != nil || n < 1 {
		return a, false, fmt.Errorf("%s (N is a turn number that /rewind lists)", RewindUsage)
	}
	a = RewindArgs{Turn: n, Files: true, Conversation: true}
	for _, f := range fields[1:] {
		switch f {
		case "files":
			a.Conversation = false
		case "conversation":
			a.Files = false
		case "force":
			a.Force = true
		case "details":
			a.Details = true
		default:
			if len(f) > 20 {
				f = f[:20] + "…"
			}
			return a, false, fmt.Errorf("%s: unknown word %q", RewindUsage, f)
		}
	}
	if !a.Files && !a.Conversation {
		return a, false, fmt.Errorf("%s: files and conversation exclude each other", RewindUsage)
	}
	return a, false, nil
}
