package ui

import "strings"

// history is the list of submitted inputs, browsed with Up and Down. While
// browsing, the unsent draft is kept and comes back past the newest entry.
type history struct {
	entries []string
	pos     int // len(entries) when not browsing
	draft   string
}

// maxHistory bounds the in-memory history.
const maxHistory = 1000

// add records a submitted input and stops browsing. A repeat of the newest
// entry is not stored twice.
func (h *history) add(s string) {
	if n := len(h.entries); s != "" && (n == 0 || h.entries[n-1] != s) {
		h.entries = append(h.entries, s)
		if len(h.entries) > maxHistory {
			h.entries = h.entries[len(h.entries)-maxHistory:]
		}
	}
	h.pos, h.draft = len(h.entries), ""
}

// prev moves to the older entry; current is the text being edited. ok is
// false at the oldest entry.
func (h *history) prev(current string) (string, bool) {
	if h.pos == 0 {
		return "", false
	}
	if h.pos == len(h.entries) {
		h.draft = current
	}
	h.pos--
	return h.entries[h.pos], true
}

// next moves to the newer entry, or back to the draft. ok is false when
// not browsing.
func (h *history) next() (string, bool) {
	if h.pos >= len(h.entries) {
		return "", false
	}
	h.pos++
	if h.pos == len(h.entries) {
		return h.draft, true
	}
	return h.entries[h.pos], true
}

// find is the index of the newest entry before index before that contains
// query (ignoring case), or -1.
func (h *history) find(query string, before int) int {
	q := strings.ToLower(query)
	for i := min(before, len(h.entries)) - 1; i >= 0; i-- {
		if strings.Contains(strings.ToLower(h.entries[i]), q) {
			return i
		}
	}
	return -1
}

// historySearch is a reverse incremental search of the history (Ctrl+R),
// as in a shell: typing narrows it, Ctrl+R goes to an older match, Enter
// keeps the match in the input, Esc puts the draft back.
type historySearch struct {
	query string
	match int // index of the match shown, -1 for none
	draft string
}
