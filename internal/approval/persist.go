package approval

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/go-json-experiment/json"

	"github.com/tiny-agent/tiny-go/internal/store"
)

// RulesFile is the file beside a session (in its store.SidecarDir) that
// keeps the session's "always" answers, one JSON line per answer:
//
//	{"allow":[["bash","cmd","ls"],["bash","cmd","wc"]]}
//
// Each inner array is one rule key (see call.rules) split at its NUL
// separators. A line is appended and synced before the call it allowed
// commits its toolStarted, so a committed call's rule is never lost; a
// torn last line (a crash mid-write) allowed nothing that committed and is
// ignored. Forks do not inherit the file: a new session asks afresh.
const RulesFile = "approvals.jsonl"

type rulesLine struct {
	Allow [][]string `json:"allow"`
}

// NewSessionGate returns a Gate for the session at sessionPath: it starts
// with the rules kept beside that session and keeps each new "always"
// answer there. Nothing is created until the first such answer.
func NewSessionGate(workDir, sessionPath string, ask AskFunc) (*Gate, error) {
	g := NewGate(workDir, ask)
	g.journal = store.NewJournal(sessionPath, RulesFile, true)
	rules, err := LoadRules(sessionPath)
	if err != nil {
		return nil, err
	}
	for _, r := range rules {
		g.rules[r] = true
	}
	return g, nil
}

// LoadRules returns the rule keys kept beside the session at sessionPath
// (none when there is no file). A torn last line is ignored, and so are
// other unreadable lines.
func LoadRules(sessionPath string) ([]string, error) {
	data, err := store.ReadSidecarFile(sessionPath, RulesFile)
	if err != nil {
		return nil, fmt.Errorf("approval rules: %w", err)
	}
	return parseRules(data), nil
}

func parseRules(data []byte) []string {
	var rules []string
	for len(data) > 0 {
		line, rest, complete := bytes.Cut(data, []byte("\n"))
		data = rest
		if !complete {
			break // torn tail: its call never committed
		}
		var l rulesLine
		if json.Unmarshal(line, &l) != nil {
			continue
		}
		for _, parts := range l.Allow {
			if validRule(parts) {
				rules = append(rules, strings.Join(parts, "\x00"))
			}
		}
	}
	return rules
}

// validRule accepts the shapes call.rules produces: tool+"tool",
// tool+"cmd"+word, tool+action.
func validRule(parts []string) bool {
	if len(parts) < 2 || len(parts) > 3 {
		return false
	}
	for _, p := range parts {
		if p == "" || strings.ContainsRune(p, 0) {
			return false
		}
	}
	return (len(parts) == 3) == (parts[1] == "cmd")
}

// persist appends rules as one line and syncs it. Called with g.mu held.
func (g *Gate) persist(rules []string) error {
	if g.journal == nil {
		return nil
	}
	l := rulesLine{Allow: make([][]string, len(rules))}
	for i, r := range rules {
		l.Allow[i] = strings.Split(r, "\x00")
	}
	line, err := json.Marshal(l)
	if err != nil {
		return err
	}
	return g.journal.Append(append(line, '\n'))
}

// Close closes the rules file, if one was opened.
func (g *Gate) Close() error {
	if g.journal == nil {
		return nil
	}
	return g.journal.Close()
}
