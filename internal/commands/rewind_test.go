package commands

import (
	"strings"
	"testing"
)

func TestParseRewind(t *testing.T) {
	for _, c := range []struct {
		in   string
		want RewindArgs
		list bool
		err  string
	}{
		{in: "", list: true},
		{in: "  ", list: true},
		{in: "3", want: RewindArgs{Turn: 3, Files: true, Conversation: true}},
		{in: "2 files", want: RewindArgs{Turn: 2, Files: true}},
		{in: "2 conversation", want: RewindArgs{Turn: 2, Conversation: true}},
		{in: "1 files force", want: RewindArgs{Turn: 1, Files: true, Force: true}},
		{in: "0", err: "Usage: /rewind"},
		{in: "x", err: "Usage: /rewind"},
		{in: "1 files conversation", err: "exclude each other"},
		{in: "1 everything", err: `unknown word "everything"`},
	} {
		got, list, err := ParseRewind(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("ParseRewind(%q) error %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || list != c.list || (!list && got != c.want) {
			t.Errorf("ParseRewind(%q) = %+v %v %v, want %+v %v", c.in, got, list, err, c.want, c.list)
		}
	}
}

func FuzzParseRewind(f *testing.F) {
	for _, s := range []string{"", "1", "2 files force", "3 conversation", "-1", "1 files conversation", "99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		req, list, err := ParseRewind(s)
		if err != nil || list {
			return
		}
		if req.Turn < 1 || (!req.Files && !req.Conversation) {
			t.Fatalf("ParseRewind(%q) = %+v", s, req)
		}
	})
}
