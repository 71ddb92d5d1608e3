package approval

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/go-json-experiment/json"

	"github.com/tiny-agent/tiny-go/internal/statekey"
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
	// MAC seals the line with tiny-go's key (package statekey), bound to
	// the session: a line another program wrote, or copied from another
	// session, allows nothing.
	MAC string `json:"mac,omitempty"`
}

// rulesPurpose binds the lines' seals to the session they are beside.
func rulesPurpose(sessionPath string) string {
	return "approvals/" + filepath.Base(sessionPath)
}

// NewSessionGate returns a Gate for the session at sessionPath: it starts
// with the rules kept beside that session and keeps each new "always"
// answer there. Nothing is created until the first such answer.
func NewSessionGate(workDir, sessionPath string, ask AskFunc) (*Gate, error) {
	g := NewGate(workDir, ask)
	g.journal = store.NewJournal(sessionPath, RulesFile, true)
	g.purpose = rulesPurpose(sessionPath)
	rules, refused, err := loadRules(sessionPath)
	if err != nil {
		return nil, err
	}
	for _, r := range rules {
		g.rules[r] = true
	}
	if refused > 0 {
		g.refused = fmt.Sprintf("refused %d line(s) of %s beside session %s that tiny-go did not seal (forged, or saved before approvals were keyed): they allow nothing; answer \"always\" again where you want it", refused, RulesFile, strings.TrimSuffix(filepath.Base(sessionPath), ".jsonl"))
	}
	return g, nil
}

// Refused is one line saying which kept rules were refused, or "".
func (g *Gate) Refused() string { return g.refused }

// LoadRules returns the rule keys kept beside the session at sessionPath
// (none when there is no file). A torn last line is ignored, and so are
// other unreadable lines.
func LoadRules(sessionPath string) ([]string, error) {
	rules, _, err := loadRules(sessionPath)
	return rules, err
}

// loadRules is LoadRules with the number of lines refused for their seal.
func loadRules(sessionPath string) ([]string, int, error) {
	data, err := store.ReadSidecarFile(sessionPath, RulesFile)
	if err != nil {
		return nil, 0, fmt.Errorf("approval rules: %w", err)
	}
	rules, refused := parseRules(rulesPurpose(sessionPath), data)
	return rules, refused, nil
}

// parseRules reads the sealed lines of data; refused counts the others.
func parseRules(purpose string, data []byte) (rules []string, refused int) {
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
		if ok, err := checkLine(purpose, l); !ok || err != nil {
			refused++
			continue
		}
		for _, parts := range l.Allow {
			if validRule(parts) {
				rules = append(rules, strings.Join(parts, "\x00"))
			}
		}
	}
	return rules, refused
}

// checkLine reports whether l carries tiny-go's seal of its rules.
func checkLine(purpose string, l rulesLine) (bool, error) {
	allow, err := json.Marshal(l.Allow)
	if err != nil {
		return false, err
	}
	return statekey.Check(l.MAC, purpose, allow)
}

// validRule accepts the shapes call.rules produces: tool+"tool",
// tool+"cmd"+word, tool+"domain"+host, tool+action.
func validRule(parts []string) bool {
	if len(parts) < 2 || len(parts) > 3 {
		return false
	}
	for _, p := range parts {
		if p == "" || strings.ContainsRune(p, 0) {
			return false
		}
	}
	return (len(parts) == 3) == (parts[1] == "cmd" || parts[1] == "domain")
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
	allow, err := json.Marshal(l.Allow)
	if err != nil {
		return err
	}
	if l.MAC, err = statekey.Hex(g.purpose, allow); err != nil {
		return err
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
