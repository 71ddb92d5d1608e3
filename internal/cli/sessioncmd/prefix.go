package sessioncmd

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tiny-agent/tiny-go/internal/cli/cmdutil"
	"github.com/tiny-agent/tiny-go/internal/store"
)

// minIDPrefix is the shortest id prefix that names a session, as git's
// shortest abbreviation: shorter words are more likely typos.
const minIDPrefix = 4

// abbrevLen is the length of the ids `session list` prints when they are
// unique at that length.
const abbrevLen = 8

// maxAbbrevLen is the longest abbreviation; an id that needs more is
// printed whole.
const maxAbbrevLen = 24

// ExpandID returns the id of the one session of cwd whose id starts
// with arg, so that the short ids `session list` prints are accepted
// wherever an id is. A full id, or a word that is no id prefix, is
// returned as it is (the caller says when no session has it).
func ExpandID(cwd, arg string) (string, error) {
	if store.ValidID(arg) || !isIDPrefix(arg) {
		return arg, nil
	}
	ids, err := store.IDs(cwd)
	if err != nil {
		return "", fmt.Errorf("session %s: %w", arg, err)
	}
	var found []string
	for _, id := range ids {
		if strings.HasPrefix(id, arg) {
			found = append(found, id)
		}
	}
	switch len(found) {
	case 0:
		return arg, nil
	case 1:
		return found[0], nil
	}
	slices.Sort(found)
	short := AbbreviateIDs(ids)
	names := make([]string, 0, 3)
	for _, id := range found[:min(3, len(found))] {
		names = append(names, short[id])
	}
	more := ""
	if len(found) > 3 {
		more = ", …"
	}
	return "", cmdutil.UsageErrorf("session id %s is ambiguous: %d sessions start with it (%s%s); give more of the id", arg, len(found), strings.Join(names, ", "), more)
}

// isIDPrefix reports whether s can be the start of a session id.
func isIDPrefix(s string) bool {
	if len(s) < minIDPrefix || len(s) >= 36 {
		return false
	}
	return strings.Trim(s, "0123456789abcdef-") == ""
}

// AbbreviateIDs maps each id to its shortest prefix of at least abbrevLen
// characters that no other of ids starts with.
func AbbreviateIDs(ids []string) map[string]string {
	sorted := slices.Clone(ids)
	slices.Sort(sorted)
	sorted = slices.Compact(sorted)
	out := make(map[string]string, len(sorted))
	for i, id := range sorted {
		n := abbrevLen
		if i > 0 {
			n = max(n, commonPrefix(id, sorted[i-1])+1)
		}
		if i+1 < len(sorted) {
			n = max(n, commonPrefix(id, sorted[i+1])+1)
		}
		if n < len(id) && id[n-1] == '-' {
			n++ // a prefix never ends at a hyphen
		}
		if n > maxAbbrevLen {
			n = len(id) // ids made in the same millisecond: no saving
		}
		out[id] = id[:min(n, len(id))]
	}
	return out
}

func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}
