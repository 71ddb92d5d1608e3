// Package termmd renders Markdown (CommonMark with GitHub's tables,
// strikethrough, task lists and autolinks) as styled terminal lines that
// fit a width: nothing is cut, a word wider than the line is broken, a
// table too wide for the screen gets narrower columns whose cells wrap.
//
// goldmark parses (parse.go turns its tree into this package's nodes);
// GitHub's bare URLs are found afterwards on the text (linkify.go), as
// cmark-gfm does. Fenced code blocks are syntax-highlighted by
// internal/highlight (code.go). Both are built on first use. HTML is
// shown as text.
package termmd

import (
	"strconv"
	"strings"

	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/tiny-agent/tiny-go/internal/highlight"
)

// margin is the left margin of a rendered document, as glamour's styles
// have it; the right edge keeps the same distance from the screen's edge.
const margin = 2

// minWidth is the narrowest text column rendered; below it lines may be
// wider than asked (nothing sensible fits).
const minWidth = 8

// minNested is the narrowest column a quote or list gives its content: a
// block nested deeper than the width allows is not indented any further,
// so that every line still fits.
const minNested = 4

// Render returns src as terminal lines of at most width cells (when width
// leaves room for minWidth), joined by "\n", without leading or trailing
// blank lines, in 256 colours. light picks colours for a light background.
func Render(src string, width int, light bool) string {
	return RenderWith(src, Options{Width: width, Light: light, Profile: colorprofile.ANSI256})
}

// Options are how RenderWith renders.
type Options struct {
	Width int
	Light bool // colours for a light background
	// Profile is the terminal's colours: below ANSI256 every colour is
	// brought down to the 16 (ANSI) or dropped (Ascii: NO_COLOR keeps
	// bold and italics; NoTTY: plain text).
	Profile colorprofile.Profile
}

// RenderWith is Render for a terminal's colour profile.
func RenderWith(src string, o Options) string {
	r := newRenderer(o)
	lines := r.blocks(nil, parse(src), r.inner(o.Width))
	return r.finish(lines)
}

func newRenderer(o Options) *renderer {
	r := &renderer{pal: darkPalette, light: o.Light, profile: o.Profile}
	if o.Light {
		r.pal = lightPalette
	}
	return r
}

func (r *renderer) inner(width int) int { return max(width-2*margin, minWidth) }

// finish indents the lines by the margin, drops blank lines at both
// ends, and brings the colours down to the profile.
func (r *renderer) finish(lines []string) string {
	return r.downsample(strings.Trim(strings.Join(r.indent(lines), "\n"), "\n"))
}

func (r *renderer) indent(lines []string) []string {
	pad := strings.Repeat(" ", margin)
	for i, l := range lines {
		if l != "" {
			lines[i] = pad + l
		}
	}
	return lines
}

func (r *renderer) downsample(s string) string {
	if r.profile >= colorprofile.ANSI256 || !strings.Contains(s, "\x1b[") {
		return s
	}
	var b strings.Builder
	w := colorprofile.Writer{Forward: &b, Profile: r.profile}
	_, _ = w.WriteString(s)
	return b.String()
}

// palette holds the SGR colour parameters of each element.
type palette struct {
	heading, code, codeBlock, link, quote, rule, bullet string
}

var darkPalette = palette{heading: "38;5;39", code: "38;5;203", codeBlock: "38;5;250", link: "38;5;30", quote: "38;5;244", rule: "38;5;240", bullet: "38;5;244"}

var lightPalette = palette{heading: "38;5;27", code: "38;5;160", codeBlock: "38;5;238", link: "38;5;30", quote: "38;5;242", rule: "38;5;250", bullet: "38;5;242"}

type renderer struct {
	pal     palette
	light   bool
	profile colorprofile.Profile
}

// The block renderers append their lines to out and return it; a
// container prefixes the lines its children appended (a quote's bar, an
// item's indentation) in place, so deep nesting does not copy every line
// once per level.

// blocks renders the block children of n, separated by blank lines (in
// the item of a tight list, by nothing).
func (r *renderer) blocks(out []string, n *node, width int) []string {
	tight := n.kind == kindListItem && n.parent.tight
	start := len(out)
	for c := n.firstChild; c != nil; c = c.next {
		separate := len(out) > start && !tight
		if separate {
			out = append(out, "")
		}
		before := len(out)
		out = r.block(out, c, width)
		if separate && len(out) == before {
			out = out[:before-1] // the block rendered nothing
		}
	}
	return out
}

func (r *renderer) block(out []string, n *node, width int) []string {
	switch n.kind {
	case kindHeading:
		// The level's marks lead the text, as the source has them.
		return append(out, wrap(r.inline(n, strings.Repeat("#", int(n.level))+" ", "1", r.pal.heading), width)...)
	case kindParagraph:
		return append(out, wrap(r.inline(n, ""), width)...)
	case kindThematicBreak:
		return append(out, sgr(r.pal.rule, strings.Repeat("─", width)))
	case kindBlockQuote:
		if width-2 < minNested {
			return r.blocks(out, n, width)
		}
		bar := sgr(r.pal.quote, "│") + " "
		start := len(out)
		out = r.blocks(out, n, width-2)
		for i := start; i < len(out); i++ {
			out[i] = bar + out[i]
		}
		return out
	case kindList:
		return r.list(out, n, width)
	case kindCodeBlock:
		out, _ = r.code(out, n, width, highlight.State{}, true, false)
		return out
	case kindHTMLBlock:
		return append(out, wrapVerbatim(n.literal, width, "")...)
	case kindTable:
		return append(out, r.table(n, width)...)
	}
	return out
}

// list renders the items with their markers; continuation lines and
// nested blocks are indented under the item's text.
func (r *renderer) list(out []string, n *node, width int) []string {
	num := n.start
	markerWidth := 2
	if n.ordered {
		last := num - 1
		for c := n.firstChild; c != nil; c = c.next {
			last++
		}
		markerWidth = len(strconv.Itoa(last)) + 2
	}
	start := len(out)
	for item := n.firstChild; item != nil; item = item.next {
		marker := sgr(r.pal.bullet, "•") + " "
		if n.ordered {
			m := strconv.Itoa(num) + "."
			marker = m + strings.Repeat(" ", markerWidth-len(m))
			num++
		}
		if !n.tight && len(out) > start {
			out = append(out, "")
		}
		if width-markerWidth < minNested {
			// Too deep for the width: the marker on a line of its own,
			// the item's blocks under it, not indented.
			out = append(out, wrapVerbatim(strings.TrimRight(ansi.Strip(marker), " "), width, "")...)
			out = r.blocks(out, item, width)
			continue
		}
		first := len(out)
		out = r.blocks(out, item, width-markerWidth)
		if len(out) == first {
			out = append(out, "")
		}
		out[first] = marker + out[first]
		indent := strings.Repeat(" ", markerWidth)
		for i := first + 1; i < len(out); i++ {
			if out[i] != "" {
				out[i] = indent + out[i]
			}
		}
	}
	return out
}

// inline renders the inline children of n, after prefix, as one styled
// string in which every SGR sequence sets the whole state (so wrap can
// carry it across lines); hard line breaks are "\n".
func (r *renderer) inline(n *node, prefix string, style ...string) string {
	in := inliner{r: r, stack: style}
	in.emit(prefix)
	in.children(n)
	in.set("")
	return in.b.String()
}

// inliner writes inline nodes with a stack of SGR parameters.
type inliner struct {
	r     *renderer
	b     strings.Builder
	stack []string
	state string // the SGR parameters in force in b
}

func (in *inliner) emit(s string) {
	if s == "" {
		return
	}
	in.set(strings.Join(in.stack, ";"))
	in.b.WriteString(s)
}

func (in *inliner) set(want string) {
	if want == in.state {
		return
	}
	if want == "" {
		in.b.WriteString("\x1b[0m")
	} else {
		in.b.WriteString("\x1b[0;" + want + "m")
	}
	in.state = want
}

func (in *inliner) styled(params string, fn func()) {
	in.stack = append(in.stack, params)
	fn()
	in.stack = in.stack[:len(in.stack)-1]
}

func (in *inliner) children(n *node) {
	for c := n.firstChild; c != nil; c = c.next {
		in.node(c)
	}
}

func (in *inliner) node(n *node) {
	pal := in.r.pal
	switch n.kind {
	case kindText, kindRawHTML:
		in.emit(clean(n.literal))
	case kindSoftBreak:
		in.emit(" ")
	case kindHardBreak:
		in.b.WriteString("\n")
	case kindCodeSpan:
		in.styled(pal.code, func() { in.emit(clean(n.literal)) })
	case kindEmphasis:
		params := "3"
		if n.level >= 2 {
			params = "1"
		}
		in.styled(params, func() { in.children(n) })
	case kindStrikethrough:
		in.styled("9", func() { in.children(n) })
	case kindLink:
		start := in.b.Len()
		in.styled("4;"+pal.link, func() { in.children(n) })
		label := ansi.Strip(in.b.String()[start:])
		if n.dest != "" && n.dest != label {
			in.emit(" ")
			in.styled(pal.quote, func() { in.emit("(" + clean(n.dest) + ")") })
		}
	case kindAutoLink:
		in.styled("4;"+pal.link, func() { in.emit(clean(n.literal)) })
	case kindImage:
		in.emit("Image: ")
		in.children(n)
		if n.dest != "" {
			in.emit(" ")
			in.styled(pal.quote, func() { in.emit("(" + clean(n.dest) + ")") })
		}
	case kindTaskMarker:
		if n.checked {
			in.emit("[x] ")
		} else {
			in.emit("[ ] ")
		}
	default:
		in.children(n)
	}
}

// sgr colours a piece that stands alone (a rule, a marker, a code line).
func sgr(params, s string) string {
	if s == "" {
		return ""
	}
	return "\x1b[0;" + params + "m" + s + "\x1b[0m"
}

// clean drops what would move the cursor or change the terminal: control
// characters (a tab included: its width depends on the column) become
// spaces, so model text cannot draw. (strings.Map copies only on change.)
func clean(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 {
			return ' '
		}
		return r
	}, s)
}
