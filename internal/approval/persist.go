package approval

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
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
	g.sessionPath = sessionPath
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
	if g.sessionPath == "" {
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
	line = append(line, '\n')
	if err := g.openLocked(); err != nil {
		return err
	}
	if _, err := g.f.Write(line); err != nil {
		return fmt.Errorf("write approval rules: %w", err)
	}
	if err := g.f.Sync(); err != nil {
		return fmt.Errorf("sync approval rules: %w", err)
	}
	return nil
}

// openLocked opens the rules file for appending, creating it and its
// directory as needed (and syncing their directory entries), and cuts
// off a torn tail so the next line starts clean.
func (g *Gate) openLocked() error {
	if g.f != nil {
		return nil
	}
	dir, err := store.SidecarDir(g.sessionPath, true)
	if err != nil {
		return fmt.Errorf("approval rules: %w", err)
	}
	f, err := store.OpenSidecarFile(dir, RulesFile, os.O_RDWR|os.O_CREATE)
	if err != nil {
		return fmt.Errorf("approval rules: %w", err)
	}
	fail := func(err error) error {
		f.Close()
		return fmt.Errorf("approval rules: %w", err)
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return fail(err)
	}
	keep := int64(bytes.LastIndexByte(data, '\n') + 1)
	if keep != int64(len(data)) {
		if err := f.Truncate(keep); err != nil {
			return fail(err)
		}
	}
	if _, err := f.Seek(keep, io.SeekStart); err != nil {
		return fail(err)
	}
	for _, d := range []string{dir, filepath.Dir(dir)} {
		if err := syncDir(d); err != nil {
			return fail(err)
		}
	}
	g.f = f
	return nil
}

// Close closes the rules file, if one was opened.
func (g *Gate) Close() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.f == nil {
		return nil
	}
	err := g.f.Close()
	g.f = nil
	return err
}

func syncDir(path string) error {
	d, err := os.Open(path)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
