package tools

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"
)

func tailOf(s string, maxLines, maxBytes int) Tail {
	t := NewTailBuffer(maxLines, maxBytes)
	t.Write([]byte(s))
	return t.Tail()
}

func TestTailBufferFits(t *testing.T) {
	for _, tc := range []struct {
		in    string
		lines int64
	}{
		{"", 0},
		{"a", 1},
		{"a\n", 1},
		{"a\nb", 2},
		{"a\nb\n", 2},
		{"\n", 1},
		{"a\n\n", 2},
	} {
		got := tailOf(tc.in, 3, 10)
		if got.Truncated || string(got.Text) != tc.in || got.TotalLines != tc.lines {
			t.Errorf("%q: got %+v, want whole text with %d lines", tc.in, got, tc.lines)
		}
	}
}

func TestTailBufferKeepsLastLines(t *testing.T) {
	got := tailOf("1\n2\n3\n4\n5\n", 2, 100)
	if string(got.Text) != "4\n5\n" || got.FirstLine != 4 || got.TotalLines != 5 || !got.Truncated || got.Partial {
		t.Fatalf("got %+v", got)
	}
	got = tailOf("1\n2\n3\n4\n5", 2, 100)
	if string(got.Text) != "4\n5" || got.FirstLine != 4 || got.TotalLines != 5 {
		t.Fatalf("no final newline: got %+v", got)
	}
}

func TestTailBufferByteLimitDropsWholeLines(t *testing.T) {
	// "ccc\n" and "dd\n" fit in 8 bytes, "bbbb\n" would not.
	got := tailOf("a\nbbbb\nccc\ndd\n", 100, 8)
	if string(got.Text) != "ccc\ndd\n" || got.FirstLine != 3 || got.TotalLines != 4 || got.Partial {
		t.Fatalf("got %+v", got)
	}
}

func TestTailBufferPartialLineCutsAtRuneBoundary(t *testing.T) {
	// Each "é" is two bytes; a cut at an odd offset must move forward.
	in := "x\n" + strings.Repeat("é", 10)
	got := tailOf(in, 100, 5)
	if !got.Partial || got.FirstLine != 2 || got.TotalLines != 2 {
		t.Fatalf("got %+v", got)
	}
	if string(got.Text) != "éé" {
		t.Fatalf("text %q, want %q", got.Text, "éé")
	}
}

func TestTailBufferStreamingMatchesOneWrite(t *testing.T) {
	var in bytes.Buffer
	for i := range 5000 {
		in.WriteString(strings.Repeat("é", i%37))
		in.WriteString("\n")
	}
	want := tailOf(in.String(), MaxOutputLines, MaxOutputBytes)
	tb := NewTailBuffer(MaxOutputLines, MaxOutputBytes)
	data := in.Bytes()
	for len(data) > 0 {
		n := min(len(data), 1+len(data)%4099)
		tb.Write(data[:n])
		data = data[n:]
	}
	got := tb.Tail()
	if !bytes.Equal(got.Text, want.Text) || got.FirstLine != want.FirstLine || got.TotalLines != 5000 {
		t.Fatalf("streamed tail differs: first %d/%d lines %d", got.FirstLine, want.FirstLine, got.TotalLines)
	}
	if len(got.Text) > MaxOutputBytes {
		t.Fatalf("tail has %d bytes", len(got.Text))
	}
	if cap(tb.window) > 2*tb.keep {
		t.Fatalf("window grew to %d bytes", cap(tb.window))
	}
}

func FuzzLimiter(f *testing.F) {
	f.Add([]byte("hello\nworld\n"), uint8(1), uint8(8), uint8(3))
	f.Add([]byte("ééééé\n\n\nx"), uint8(2), uint8(3), uint8(1))
	f.Add([]byte("\xff\xfe\n\xe2\x82"), uint8(5), uint8(2), uint8(2))
	f.Add([]byte(strings.Repeat("ab\n", 100)), uint8(7), uint8(20), uint8(13))
	f.Fuzz(func(t *testing.T, in []byte, maxLines, maxBytes, chunk uint8) {
		ml, mb, ch := int(maxLines%16)+1, int(maxBytes)+1, int(chunk)+1
		tb := NewTailBuffer(ml, mb)
		for rest := in; len(rest) > 0; {
			n := min(ch, len(rest))
			tb.Write(rest[:n])
			rest = rest[n:]
		}
		got := tb.Tail()
		if !bytes.HasSuffix(in, got.Text) {
			t.Fatalf("%q is not a suffix of %q", got.Text, in)
		}
		if len(got.Text) > mb {
			t.Fatalf("%d bytes > limit %d", len(got.Text), mb)
		}
		if utf8.Valid(in) && !utf8.Valid(got.Text) {
			t.Fatalf("invalid UTF-8 %q from valid %q", got.Text, in)
		}
		lines := int64(bytes.Count(in, []byte{'\n'}))
		if len(in) > 0 && in[len(in)-1] != '\n' {
			lines++
		}
		if got.TotalLines != lines {
			t.Fatalf("TotalLines %d, want %d", got.TotalLines, lines)
		}
		if !got.Truncated && !bytes.Equal(got.Text, in) {
			t.Fatalf("not truncated but text differs")
		}
		if got.Truncated != (len(in) > mb || lines > int64(ml)) {
			t.Fatalf("Truncated=%v for %d bytes %d lines", got.Truncated, len(in), lines)
		}
		if shown := got.TotalLines - got.FirstLine + 1; got.Truncated && (shown < 1 || shown > int64(ml)) {
			t.Fatalf("shows %d lines, limit %d", shown, ml)
		}
		if got.Truncated && !got.Partial {
			// Whole lines: the text starts at a line start.
			if start := len(in) - len(got.Text); start > 0 && in[start-1] != '\n' {
				t.Fatalf("whole-line tail starts mid-line")
			}
		}
	})
}
