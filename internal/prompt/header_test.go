package prompt

import (
	"strings"
	"testing"
)

func TestParseSkillHeader(t *testing.T) {
	tests := []struct {
		name, in   string
		wantName   string
		wantDesc   string
		wantParsed bool
	}{
		{"plain", "---\nname: pdf\ndescription: Work with PDFs\n---\nbody", "pdf", "Work with PDFs", true},
		{"crlf", "---\r\nname: pdf\r\ndescription: Work with PDFs\r\n---\r\nbody", "pdf", "Work with PDFs", true},
		{"trimmed", "---\nname:   pdf  \t\ndescription:\tWork  \n---\n", "pdf", "Work", true},
		{"double quotes", "---\nname: \"pdf\"\ndescription: \"Work: with PDFs\"\n---\n", "pdf", "Work: with PDFs", true},
		{"single quotes", "---\nname: 'pdf'\ndescription: 'x'\n---\n", "pdf", "x", true},
		{"mismatched quotes kept", "---\nname: \"pdf'\ndescription: x\n---\n", "\"pdf'", "x", true},
		{"lone quote kept", "---\nname: \"\ndescription: x\n---\n", "\"", "x", true},
		{"empty quotes is empty", "---\nname: \"\"\ndescription: x\n---\n", "", "", false},
		{"other lines ignored", "---\ntitle: t\nname: a\nlicense: MIT\n  nested: y\ndescription: d\nallowed-tools: x\n---\n", "a", "d", true},
		{"order free", "---\ndescription: d\nname: a\n---\n", "a", "d", true},
		{"first wins", "---\nname: a\nname: b\ndescription: d\ndescription: e\n---\n", "a", "d", true},
		{"empty value then real", "---\nname:\nname: b\ndescription: d\n---\n", "b", "d", true},
		{"closing only at end of file", "---\nname: a\ndescription: d\n---", "a", "d", true},
		{"missing description", "---\nname: a\n---\n", "", "", false},
		{"missing name", "---\ndescription: d\n---\n", "", "", false},
		{"unclosed", "---\nname: a\ndescription: d\n", "", "", false},
		{"not at start", "\n---\nname: a\ndescription: d\n---\n", "", "", false},
		{"bom not at start", "\ufeff---\nname: a\ndescription: d\n---\n", "", "", false},
		{"leading space", " ---\nname: a\ndescription: d\n---\n", "", "", false},
		{"delimiter with trailing text", "--- x\nname: a\ndescription: d\n---\n", "", "", false},
		{"only delimiter line", "---", "", "", false},
		{"empty", "", "", "", false},
		{"indented keys are not top level", "---\n  name: a\n  description: d\n---\n", "", "", false},
		{"block scalar is multi-line", "---\nname: a\ndescription: |\n  long\n  text\n---\n", "", "", false},
		{"folded block scalar", "---\nname: a\ndescription: >-\n  long\n---\n", "", "", false},
		{"pipe inside value is fine", "---\nname: a\ndescription: a | b\n---\n", "a", "a | b", true},
		{"keys after closing ignored", "---\nname: a\n---\ndescription: d\n", "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name, desc, ok := ParseSkillHeader(tt.in)
			if name != tt.wantName || desc != tt.wantDesc || ok != tt.wantParsed {
				t.Errorf("ParseSkillHeader(%q) = %q, %q, %v; want %q, %q, %v",
					tt.in, name, desc, ok, tt.wantName, tt.wantDesc, tt.wantParsed)
			}
		})
	}
}

func FuzzParseSkillHeader(f *testing.F) {
	for _, seed := range []string{
		"---\nname: pdf\ndescription: Work with PDFs\n---\nbody",
		"---\r\nname: 'a'\r\ndescription: \"b\"\r\n---\r\n",
		"---\nname: a\ndescription: |\n  x\n---\n",
		"---\nname:\n---",
		"---",
		"",
		"\ufeff---\n",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		name, desc, ok := ParseSkillHeader(text)
		if !ok {
			if name != "" || desc != "" {
				t.Fatalf("not ok but returned %q, %q", name, desc)
			}
			return
		}
		if name == "" || desc == "" {
			t.Fatalf("ok with empty value: %q, %q", name, desc)
		}
		if !strings.HasPrefix(text, "---\n") && !strings.HasPrefix(text, "---\r\n") {
			t.Fatalf("ok without a leading --- line: %q", text)
		}
		for _, v := range []string{name, desc} {
			if strings.ContainsAny(v, "\n") {
				t.Fatalf("value spans lines: %q", v)
			}
			if !strings.Contains(text, v) {
				t.Fatalf("value %q not taken from the input", v)
			}
		}
		// Only text before the closing delimiter is read.
		again, _, _ := ParseSkillHeader(text[:headerEnd(text)])
		if again != name {
			t.Fatalf("header end mismatch: %q vs %q", again, name)
		}
	})
}

// headerEnd returns the offset just after the closing "---" line.
func headerEnd(text string) int {
	off := strings.IndexByte(text, '\n') + 1
	for off < len(text) {
		end := strings.IndexByte(text[off:], '\n')
		line := text[off:]
		next := len(text)
		if end >= 0 {
			line = text[off : off+end]
			next = off + end + 1
		}
		if strings.TrimSuffix(line, "\r") == "---" {
			return next
		}
		off = next
	}
	return len(text)
}
