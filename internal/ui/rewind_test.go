package ui

import (
	"strings"
	"testing"
)

func TestParseRewind(t *testing.T) {
	for _, c := range []struct {
		in   string
		want RewindRequest
		list bool
		err  string
	}{
		{in: "", list: true},
		{in: "  ", list: true},
		{in: "3", want: RewindRequest{Turn: 3, Files: true, Conversation: true}},
		{in: "2 files", want: RewindRequest{Turn: 2, Files: true}},
		{in: "2 conversation", want: RewindRequest{Turn: 2, Conversation: true}},
		{in: "1 files force", want: RewindRequest{Turn: 1, Files: true, Force: true}},
		{in: "0", err: "Usage: /rewind"},
		{in: "x", err: "Usage: /rewind"},
		{in: "1 files conversation", err: "exclude each other"},
		{in: "1 everything", err: `unknown word "everything"`},
	} {
		got, list, err := parseRewind(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("parseRewind(%q) error %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || list != c.list || (!list && got != c.want) {
			t.Errorf("parseRewind(%q) = %+v %v %v, want %+v %v", c.in, got, list, err, c.want, c.list)
		}
	}
	if c := parseCommand("/rewind 2 files"); c.kind != cmdRewind || c.text != "2 files" {
		t.Fatalf("parseCommand = %+v", c)
	}
}

func FuzzParseRewind(f *testing.F) {
	for _, s := range []string{"", "1", "2 files force", "3 conversation", "-1", "1 files conversation", "99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		req, list, err := parseRewind(s)
		if err != nil || list {
			return
		}
		if req.Turn < 1 || (!req.Files && !req.Conversation) {
			t.Fatalf("parseRewind(%q) = %+v", s, req)
		}
	})
}
