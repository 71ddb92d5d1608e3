package ui

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/go-json-experiment/json"

	"github.com/tiny-agent/tiny-go/internal/store"
)

// historyFile is the name of the input history in <cwd>/.tiny-agent.
const historyFile = "history"

// History is the input history of a working directory, kept in
// <cwd>/.tiny-agent/history (mode 0600, never through a symlink): one
// JSON string per line, oldest first, at most maxHistory entries once it
// has been loaded. Several tiny-go processes may append to it at once;
// each entry is one write.
type History struct {
	cwd string
}

// NewHistory returns the input history of cwd.
func NewHistory(cwd string) *History { return &History{cwd: cwd} }

// Load returns the entries, oldest first; a missing file is an empty
// history. A file longer than the bound is cut to its newest entries.
func (h *History) Load() ([]string, error) {
	f, err := store.OpenStateFile(h.cwd, historyFile, os.O_RDONLY, false)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("input history: %w", err)
	}
	var entries []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 4<<20)
	for sc.Scan() {
		var s string
		if json.Unmarshal(sc.Bytes(), &s) == nil && strings.TrimSpace(s) != "" {
			entries = append(entries, s) // a torn or foreign line is skipped
		}
	}
	err = sc.Err()
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("input history: %w", err)
	}
	if len(entries) > maxHistory {
		entries = entries[len(entries)-maxHistory:]
		_ = h.rewrite(entries)
	}
	return entries, nil
}

// Append adds one submitted input.
func (h *History) Append(entry string) error {
	line, err := json.Marshal(entry)
	if err != nil {
		return err
	}
	f, err := store.OpenStateFile(h.cwd, historyFile, os.O_WRONLY|os.O_APPEND|os.O_CREATE, true)
	if err != nil {
		return fmt.Errorf("input history: %w", err)
	}
	defer f.Close()
	if _, err := f.Write(append(line, '\n')); err != nil {
		return fmt.Errorf("input history: %w", err)
	}
	return nil
}

// rewrite replaces the file's content with entries.
func (h *History) rewrite(entries []string) error {
	f, err := store.OpenStateFile(h.cwd, historyFile, os.O_WRONLY|os.O_TRUNC, false)
	if err != nil {
		return err
	}
	defer f.Close()
	w := bufio.NewWriter(f)
	for _, e := range entries {
		line, err := json.Marshal(e)
		if err != nil {
			return err
		}
		w.Write(append(line, '\n'))
	}
	return w.Flush()
}
