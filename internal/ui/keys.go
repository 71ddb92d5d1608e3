package ui

import "strings"

// KeyBinding is one key users are told about. KeyBindings is the one
// source of /help's keys, the banner's key line, the footer's hints and
// docs/keys-and-commands.md's keys table (TestKeysAgree holds them
// together).
type KeyBinding struct {
	Keys string // as help names them: "Shift+Tab"
	Does string // what it does, for /help and the docs
	// Banner is its part of the banner's key line ("" for none), Hint its
	// short form under the input or in the status line.
	Banner, Hint string
}

// KeyBindings are the terminal UI's keys, in /help's order.
var KeyBindings = []KeyBinding{
	{Keys: "Enter", Does: "send"},
	{Keys: "Shift+Enter, \\+Enter", Does: "new line (also Alt+Enter, Ctrl+J)"},
	{Keys: "Esc", Does: "abort the running operation (reply, tool, !command, compaction); close a menu", Banner: "Esc aborts a run", Hint: "Esc aborts"},
	{Keys: "Esc Esc", Does: "on an empty prompt with nothing running: list the earlier turns to rewind to (as /rewind)", Hint: "Esc again to rewind"},
	{Keys: "Ctrl+C", Does: "clear the input; on an empty prompt twice to exit; abort-then-exit while running", Banner: "Ctrl+C clears a draft, and twice on an empty prompt exits"},
	{Keys: "Ctrl+D", Does: "exit on an empty prompt"},
	{Keys: "Up, Down", Does: "browse input history"},
	{Keys: "Ctrl+R", Does: "search input history"},
	{Keys: "Shift+Tab", Does: "cycle the approval mode: ask, auto, plan (edits or review in ask's place when started in them)", Hint: "shift+tab to cycle"},
	{Keys: "1, 2, 3 after a plan", Does: "accept the plan in auto mode / in ask mode / keep planning"},
	{Keys: "/, Tab", Does: "command menu; Tab completes, Up/Down move"},
	{Keys: "@", Does: "complete a path (fuzzy); Up/Down move, Tab or Enter completes"},
}

// keyHint is the Hint of the binding of keys.
func keyHint(keys string) string {
	for _, k := range KeyBindings {
		if k.Keys == keys {
			return k.Hint
		}
	}
	panic("ui: no key binding " + keys)
}

// bannerKeys is the banner's key line of the terminal UI.
func bannerKeys() string {
	var parts []string
	for _, k := range KeyBindings {
		if k.Banner != "" {
			parts = append(parts, k.Banner)
		}
	}
	return strings.Join(parts, "; ") + "."
}

// keyHelpLines are /help's keys.
func keyHelpLines() []string {
	lines := []string{"Keys:"}
	for _, k := range KeyBindings {
		lines = append(lines, "  "+padRight(k.Keys, 22)+" "+k.Does)
	}
	return lines
}
