package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/tiny-agent/tiny-go/internal/ui/uitest"
)

// benchReply is a 2,000-line reply of every shape: paragraphs, a long
// code block, a table, CJK lists.
func benchReply() string {
	return strings.Join([]string{
		uitest.Reply("paragraph", 300),
		uitest.Reply("code", 800),
		uitest.Reply("table", 100),
		uitest.Reply("cjk", 300),
		uitest.Reply("paragraph", 500),
	}, "\n")
}

// BenchmarkStreamRender streams a 2,000-line reply into the interactive
// UI's renderer as a fast model would (160 bytes per 40 ms frame, about
// 1,000 tokens a second) and reports the CPU time of one frame (committing
// what is final, rendering the live area) and how many frames a second
// that would allow.
func BenchmarkStreamRender(b *testing.B) {
	text := benchReply()
	const perFrame = 160
	var frames int
	var worst time.Duration
	b.ResetTimer()
	for range b.N {
		var md markdown
		s := newStreamer(&md, 119, 10)
		for off := 0; off < len(text); off += perFrame {
			t0 := time.Now()
			s.write(text[off:min(off+perFrame, len(text))])
			s.advance(false)
			liveLines(s.live, 120, 10)
			if d := time.Since(t0); d > worst {
				worst = d
			}
			frames++
		}
		s.advance(true)
	}
	perFrameNs := float64(b.Elapsed().Nanoseconds()) / float64(frames)
	b.ReportMetric(perFrameNs/1e3, "µs/frame")
	b.ReportMetric(1e9/perFrameNs, "frames/s")
	b.ReportMetric(float64(worst.Microseconds()), "worst-µs/frame")
	b.ReportMetric(float64(frames)/float64(b.N), "frames/reply")
}
