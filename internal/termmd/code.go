package termmd

import (
	"strings"

	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/tiny-agent/tiny-go/internal/highlight"
)

// code appends the lines of code block n, indented by two cells: with
// label, a fenced block's language (or info string's first word) above
// it; its code coloured by internal/highlight from state when the
// language is one it knows, and the state after is returned. A line
// wider than the screen continues on the next. With keepBlank the blank
// lines that end the code are kept (a chunk of a block that goes on).
func (r *renderer) code(out []string, n *node, width int, from highlight.State, label, keepBlank bool) ([]string, highlight.State) {
	info := strings.TrimSpace(clean(n.info))
	lang := highlight.Lookup(info)
	if label && info != "" {
		name, _, _ := strings.Cut(info, " ")
		if lang != nil {
			name = lang.Name()
		}
		out = append(out, "  "+sgr(r.pal.rule, ansi.Truncate(name, max(width-2, 1), "…")))
	}
	code := strings.TrimSuffix(n.literal, "\n")
	if !keepBlank {
		code = strings.TrimRight(code, "\n")
	}
	if code == "" && !keepBlank {
		return append(out, ""), from
	}
	src := strings.Split(strings.ReplaceAll(code, "\t", "    "), "\n")
	for i, l := range src {
		src[i] = clean(l)
	}
	if lang == nil || r.profile < colorprofile.ANSI {
		for _, l := range wrapVerbatim(strings.Join(src, "\n"), width-2, r.pal.codeBlock) {
			out = append(out, "  "+l)
		}
		return out, from
	}
	lines, to := lang.Lines(strings.Join(src, "\n"), from, r.profile, r.light)
	for _, l := range lines {
		for _, part := range carryStyle(strings.Split(ansi.Hardwrap(l, width-2, true), "\n")) {
			if part == "" {
				out = append(out, "")
			} else {
				out = append(out, "  "+part)
			}
		}
	}
	return out, to
}

// CodeChunks renders a fenced code block that arrives in chunks of whole
// lines as RenderWith renders it whole: the label with the first chunk
// only, the colours of each chunk going on from where the one before
// ended (a comment or string spanning chunks stays one), each chunk at
// the cost of its own lines.
type CodeChunks struct {
	r       *renderer
	width   int
	state   highlight.State
	started bool
}

// NewCodeChunks starts a block.
func NewCodeChunks(o Options) *CodeChunks {
	return &CodeChunks{r: newRenderer(o), width: o.Width}
}

// Render renders the next chunk. src is the block's opening fence line
// and the chunk's lines, as the source has them (indented like the
// fence), without a closing fence. With advance the chunk is final: the
// next call goes on after it; without, the next call starts where this
// one did (a preview of lines still arriving).
func (c *CodeChunks) Render(src string, advance bool) []string {
	doc := parse(src)
	n := doc.firstChild
	if n == nil || n.kind != kindCodeBlock || !n.fenced {
		return strings.Split(c.r.finish(c.r.blocks(nil, doc, c.r.inner(c.width))), "\n")
	}
	// The parser drops the blank lines that end the document; in a
	// chunk they are the code's.
	lines := strings.Split(src, "\n")
	blank := 0
	for i := len(lines) - 1; i > 0 && strings.TrimSpace(lines[i]) == ""; i-- {
		blank++
	}
	if blank > 0 {
		n.literal = strings.TrimRight(n.literal, " \t\n") + strings.Repeat("\n", blank+1)
		if strings.TrimSpace(n.literal) == "" {
			n.literal = strings.Repeat("\n", blank)
		}
	}
	lines, to := c.r.code(nil, n, c.r.inner(c.width), c.state, !c.started, true)
	if advance {
		c.state, c.started = to, true
	}
	for i, l := range c.r.indent(lines) {
		lines[i] = c.r.downsample(l)
	}
	return lines
}
