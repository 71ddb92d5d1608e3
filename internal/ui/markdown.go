package ui

import (
	"strings"

	"charm.land/glamour/v2"
	"charm.land/glamour/v2/styles"
)

// markdown renders completed replies with glamour, keeping one renderer
// per width and background. It is used from the Update goroutine only.
type markdown struct {
	light bool
	width int
	r     *glamour.TermRenderer
}

// render returns text as styled terminal lines at most width cells wide;
// it falls back to the plain text when rendering fails.
func (md *markdown) render(text string, width int) string {
	text = sanitize(text)
	if width <= 0 {
		width = 80
	}
	if md.r == nil || md.width != width {
		style := styles.DarkStyle
		if md.light {
			style = styles.LightStyle
		}
		// glamour's styles indent by two cells on the left; keep the right
		// edge inside the terminal.
		r, err := glamour.NewTermRenderer(glamour.WithStandardStyle(style), glamour.WithWordWrap(max(width-4, 20)))
		if err != nil {
			return text
		}
		md.r, md.width = r, width
	}
	out, err := md.r.Render(text)
	if err != nil {
		return text
	}
	lines := strings.Split(strings.Trim(out, "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n")
}

// setLight switches the style for the terminal's background.
func (md *markdown) setLight(light bool) {
	if md.light != light {
		md.light, md.r = light, nil
	}
}
