package ui

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestHistoryFile(t *testing.T) {
	dir := t.TempDir()
	h := NewHistory(dir)
	if e, err := h.Load(); err != nil || len(e) != 0 {
		t.Fatalf("empty history: %q, %v", e, err)
	}
	for _, s := range []string{"first", "two\nlines", "third"} {
		if err := h.Append(s); err != nil {
			t.Fatal(err)
		}
	}
	e, err := h.Load()
	if err != nil || strings.Join(e, "|") != "first|two\nlines|third" {
		t.Fatalf("history: %q, %v", e, err)
	}
	path := filepath.Join(dir, ".tiny-agent", "history")
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("history file mode: %v, %v", fi.Mode(), err)
	}
	// A torn last line is skipped.
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`"torn`)
	f.Close()
	if e, _ := h.Load(); len(e) != 3 {
		t.Fatalf("with a torn line: %q", e)
	}
}

func TestHistoryIsBounded(t *testing.T) {
	dir := t.TempDir()
	h := NewHistory(dir)
	for i := range maxHistory + 10 {
		if err := h.Append(fmt.Sprintf("entry %d", i)); err != nil {
			t.Fatal(err)
		}
	}
	e, err := h.Load()
	if err != nil || len(e) != maxHistory || e[0] != "entry 10" {
		t.Fatalf("%d entries from %q, %v", len(e), e[0], err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, ".tiny-agent", "history"))
	if n := strings.Count(string(b), "\n"); n != maxHistory {
		t.Fatalf("the file keeps %d lines, want %d", n, maxHistory)
	}
}

func TestHistoryRefusesSymlinks(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(t.TempDir(), "elsewhere")
	if err := os.MkdirAll(filepath.Join(dir, ".tiny-agent"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(dir, ".tiny-agent", "history")); err != nil {
		t.Fatal(err)
	}
	if err := NewHistory(dir).Append("secret prompt"); err == nil {
		t.Fatal("appended through a symlink")
	}
	if _, err := os.Stat(target); err == nil {
		t.Fatal("the symlink's target was created")
	}
}

func TestCtrlRSearchesHistory(t *testing.T) {
	dir := t.TempDir()
	store := NewHistory(dir)
	for _, s := range []string{"fix the parser", "add a test", "fix the lexer"} {
		store.Append(s)
	}
	h := newHarness(t, newStub(nil), nil)
	h.m.store = store
	h.m.hist.entries, _ = store.Load()
	h.m.hist.pos = len(h.m.hist.entries)
	h.typeText("draft")
	h.press(keyCtrlR)
	h.typeText("fix")
	if v := h.m.input.Value(); v != "fix the lexer" {
		t.Fatalf("first match %q", v)
	}
	h.press(keyCtrlR)
	if v := h.m.input.Value(); v != "fix the parser" {
		t.Fatalf("older match %q", v)
	}
	if !strings.Contains(h.m.notice, "search history: fix") {
		t.Fatalf("notice %q", h.m.notice)
	}
	h.press(keyEsc)
	if v := h.m.input.Value(); v != "draft" || h.m.search != nil {
		t.Fatalf("after Esc: %q", v)
	}
	h.press(keyCtrlR)
	h.typeText("test")
	h.press(keyEnter) // keeps the match, does not send it
	if v := h.m.input.Value(); v != "add a test" || h.m.search != nil {
		t.Fatalf("after Enter: %q", v)
	}
	h.press(keyEnter) // now it is sent, and remembered
	h.until("the echo", h.printedLine("> add a test"))
	if e, _ := store.Load(); e[len(e)-1] != "add a test" {
		t.Fatalf("history file: %q", e)
	}
}
