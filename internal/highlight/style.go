package highlight

import (
	"strconv"
	"strings"
	"sync"

	"github.com/alecthomas/chroma/v2"
	"github.com/charmbracelet/colorprofile"
)

// The style: a few classes of token, each with a colour for every
// profile, picked by hand rather than converted (the nearest of the 16
// colours to a 256-colour grey or pastel is often unreadable). The true
// colours are One Dark's and One Light's.
type colour struct {
	ansi    string // SGR parameters among the 16 colours (30-37, 90-97)
	ansi256 int
	rgb     string // "#rrggbb"
}

type class struct {
	dark, light colour
	attrs       string // "1" bold, "3" italic; "" for none
}

var (
	keyword  = class{dark: colour{"35", 170, "#c678dd"}, light: colour{"35", 127, "#a626a4"}}
	typeName = class{dark: colour{"36", 80, "#56b6c2"}, light: colour{"36", 30, "#0184bc"}}
	str      = class{dark: colour{"32", 114, "#98c379"}, light: colour{"32", 28, "#50a14f"}}
	number   = class{dark: colour{"33", 173, "#d19a66"}, light: colour{"33", 130, "#986801"}}
	comment  = class{dark: colour{"90", 244, "#7f848e"}, light: colour{"90", 245, "#a0a1a7"}, attrs: "3"}
	function = class{dark: colour{"34", 75, "#61afef"}, light: colour{"34", 25, "#4078f2"}}
	tag      = class{dark: colour{"31", 204, "#e06c75"}, light: colour{"31", 160, "#e45649"}}
	attr     = class{dark: colour{"33", 180, "#e5c07b"}, light: colour{"33", 136, "#c18401"}}
	inserted = class{dark: colour{"32", 114, "#98c379"}, light: colour{"32", 28, "#50a14f"}}
	deleted  = class{dark: colour{"31", 204, "#e06c75"}, light: colour{"31", 160, "#e45649"}}
	heading  = class{dark: colour{"34", 75, "#61afef"}, light: colour{"34", 25, "#4078f2"}, attrs: "1"}
	emph     = class{attrs: "3"}
	strong   = class{attrs: "1"}
)

// classOf maps a token type to its class; nil leaves the text in the
// terminal's own colour. The most specific type is looked up first.
func classOf(t chroma.TokenType) *class {
	switch t {
	case chroma.KeywordType, chroma.NameBuiltin, chroma.NameClass, chroma.NameNamespace:
		return &typeName
	case chroma.KeywordConstant, chroma.NameConstant, chroma.NameBuiltinPseudo:
		return &number
	case chroma.NameFunction, chroma.NameFunctionMagic, chroma.NameDecorator:
		return &function
	case chroma.NameTag:
		return &tag
	case chroma.NameAttribute, chroma.NameVariable, chroma.NameLabel, chroma.NameEntity:
		return &attr
	case chroma.CommentPreproc, chroma.CommentPreprocFile:
		return &keyword
	case chroma.GenericInserted:
		return &inserted
	case chroma.GenericDeleted, chroma.GenericError:
		return &deleted
	case chroma.GenericHeading, chroma.GenericSubheading:
		return &heading
	case chroma.GenericEmph:
		return &emph
	case chroma.GenericStrong:
		return &strong
	}
	switch t.Category() {
	case chroma.Keyword:
		return &keyword
	case chroma.Comment:
		return &comment
	case chroma.Literal:
		if t.InSubCategory(chroma.LiteralString) {
			return &str
		}
		if t.InSubCategory(chroma.LiteralNumber) {
			return &number
		}
		return &str
	}
	return nil
}

// style caches the SGR parameters of each token type for one profile
// and background.
type style struct {
	profile colorprofile.Profile
	light   bool
	mu      sync.Mutex
	params  map[chroma.TokenType]string
}

var styles sync.Map // styleKey -> *style

type styleKey struct {
	profile colorprofile.Profile
	light   bool
}

func styleFor(profile colorprofile.Profile, light bool) *style {
	k := styleKey{profile, light}
	if s, ok := styles.Load(k); ok {
		return s.(*style)
	}
	s, _ := styles.LoadOrStore(k, &style{profile: profile, light: light, params: map[chroma.TokenType]string{}})
	return s.(*style)
}

// sgr is the SGR parameters of t's colour, "" for none.
func (s *style) sgr(t chroma.TokenType) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p, ok := s.params[t]; ok {
		return p
	}
	p := ""
	if c := classOf(t); c != nil {
		p = c.sgr(s.profile, s.light)
	}
	s.params[t] = p
	return p
}

func (c *class) sgr(profile colorprofile.Profile, light bool) string {
	col := c.dark
	if light {
		col = c.light
	}
	var parts []string
	if c.attrs != "" {
		parts = append(parts, c.attrs)
	}
	switch {
	case col.ansi == "":
	case profile >= colorprofile.TrueColor:
		r, _ := strconv.ParseUint(col.rgb[1:3], 16, 8)
		g, _ := strconv.ParseUint(col.rgb[3:5], 16, 8)
		b, _ := strconv.ParseUint(col.rgb[5:7], 16, 8)
		parts = append(parts, "38;2;"+strconv.Itoa(int(r))+";"+strconv.Itoa(int(g))+";"+strconv.Itoa(int(b)))
	case profile >= colorprofile.ANSI256:
		parts = append(parts, "38;5;"+strconv.Itoa(col.ansi256))
	default:
		parts = append(parts, col.ansi)
	}
	return strings.Join(parts, ";")
}
