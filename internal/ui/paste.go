package ui

import (
	"fmt"
	"github.com/tiny-agent/tiny-go/internal/attach"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"
)

// A paste longer than this many lines or characters shows in the input
// (and its echo) as a placeholder; the model gets the whole text.
const (
	pasteFoldLines = 10
	pasteFoldChars = 1000
	// maxPaste is the largest paste taken; a bigger one is refused
	// (attach a file with @path instead).
	maxPaste = 4 << 20
)

var pastePlaceholder = regexp.MustCompile(`\[Pasted text #(\d+) \+\d+ lines\]`)

// paste takes a bracketed paste into the input: short ones as they are,
// long ones folded into a numbered placeholder.
func (m *model) paste(msg tea.PasteMsg) tea.Cmd {
	text := strings.ReplaceAll(strings.ReplaceAll(msg.Content, "\r\n", "\n"), "\r", "\n")
	if len(text) > maxPaste {
		m.print(errStyle.Render(fmt.Sprintf("Paste not taken: %s is more than the %s a paste may have; save it to a file and attach it with @path.", attach.Size(int64(len(text))), attach.Size(maxPaste))))
		return nil
	}
	if ref, ok := m.pastedImagePath(text); ok {
		m.input.InsertString(ref + " ")
		return nil
	}
	lines := strings.Count(text, "\n") + 1
	if lines <= pasteFoldLines && len(text) <= pasteFoldChars {
		msg.Content = text
		return m.updateInput(msg)
	}
	m.pastes = append(m.pastes, text)
	m.input.InsertString(fmt.Sprintf("[Pasted text #%d +%d lines]", len(m.pastes), lines))
	return nil
}

// unfoldPastes replaces the placeholders of input with the texts pasted.
func (m *model) unfoldPastes(input string) string {
	if len(m.pastes) == 0 {
		return input
	}
	return pastePlaceholder.ReplaceAllStringFunc(input, func(ph string) string {
		n, err := strconv.Atoi(pastePlaceholder.FindStringSubmatch(ph)[1])
		if err != nil || n < 1 || n > len(m.pastes) {
			return ph
		}
		return m.pastes[n-1]
	})
}

// pastedImagePath turns a pasted path of an image file (as a terminal
// pastes a dragged file: maybe quoted) into an @mention of it, relative
// to the working directory when it is under it.
func (m *model) pastedImagePath(text string) (string, bool) {
	p := strings.TrimSpace(text)
	if len(p) >= 2 && (p[0] == '\'' && p[len(p)-1] == '\'' || p[0] == '"' && p[len(p)-1] == '"') {
		p = p[1 : len(p)-1]
	}
	if m.mentions == nil || p == "" || strings.ContainsAny(p, " \t\n") {
		return "", false
	}
	switch strings.ToLower(filepath.Ext(p)) {
	case ".png", ".jpg", ".jpeg", ".gif", ".webp":
	default:
		return "", false
	}
	abs := p
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(m.mentions.Root(), p)
	}
	if fi, err := os.Stat(abs); err != nil || !fi.Mode().IsRegular() {
		return "", false
	}
	if rel, err := filepath.Rel(m.mentions.Root(), p); err == nil && filepath.IsAbs(p) && !strings.HasPrefix(rel, "..") {
		p = rel
	}
	return "@" + p, true
}
