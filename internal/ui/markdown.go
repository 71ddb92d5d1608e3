package ui

import (
	"github.com/charmbracelet/colorprofile"
	"github.com/tiny-agent/tiny-go/internal/termmd"
)

// markdown renders completed replies for the terminal's background and
// colours. It uses termmd rather than glamour: glamour links chroma's
// lexers and styles, whose package initialisation alone made every start
// of tiny-go (--help included) tens of milliseconds slower
// (docs/performance.md §12, §17).
type markdown struct {
	light bool
	// profile is the terminal's colours, as Bubble Tea detected them
	// (NO_COLOR, TERM, COLORTERM); the zero value, before it is known,
	// renders in 256 colours as termmd.Render does.
	profile colorprofile.Profile
}

func (md *markdown) options(width int) termmd.Options {
	if width <= 0 {
		width = 80
	}
	p := md.profile
	if p == colorprofile.Unknown {
		p = colorprofile.ANSI256
	}
	return termmd.Options{Width: width, Light: md.light, Profile: p}
}

// render returns text as styled terminal lines at most width cells wide.
func (md *markdown) render(text string, width int) string {
	return termmd.RenderWith(sanitize(text), md.options(width))
}

// codeChunks starts a fenced code block rendered chunk by chunk.
func (md *markdown) codeChunks(width int) *termmd.CodeChunks {
	return termmd.NewCodeChunks(md.options(width))
}

// setLight switches the style for the terminal's background.
func (md *markdown) setLight(light bool) {
	md.light = light
}
