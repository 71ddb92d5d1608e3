package ui

import "github.com/tiny-agent/tiny-go/internal/termmd"

// markdown renders completed replies for the terminal's background. It
// uses termmd rather than glamour: glamour links chroma, whose package
// initialisation alone made every start of tiny-go (--help included) tens
// of milliseconds slower (docs/performance.md).
type markdown struct {
	light bool
}

// render returns text as styled terminal lines at most width cells wide.
func (md *markdown) render(text string, width int) string {
	if width <= 0 {
		width = 80
	}
	return termmd.Render(sanitize(text), width, md.light)
}

// setLight switches the style for the terminal's background.
func (md *markdown) setLight(light bool) {
	md.light = light
}
