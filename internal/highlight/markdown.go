package highlight

import "github.com/alecthomas/chroma/v2"

// markdownLexer is Markdown, by rules of our own (chroma's is written in
// Go inside its lexers package, see the package comment): headings,
// list markers, quotes, rules, emphasis, code spans, links, fenced code
// and HTML comments, which are states so that they span chunks.
func markdownLexer() *chroma.RegexLexer {
	return chroma.MustNewLexer(&chroma.Config{
		Name:      "Markdown",
		Aliases:   []string{"markdown", "md", "mkd"},
		Filenames: []string{"*.md", "*.markdown"},
	}, func() chroma.Rules {
		return chroma.Rules{
			"root": {
				{Pattern: "^[ ]{0,3}(```+|~~~+)[^\\n]*\\n", Type: chroma.LiteralString, Mutator: chroma.Push("fence")},
				{Pattern: `^[ ]{0,3}#[ \t][^\n]*`, Type: chroma.GenericHeading},
				{Pattern: `^[ ]{0,3}#{2,6}([ \t][^\n]*)?$`, Type: chroma.GenericSubheading},
				{Pattern: `^[ ]{0,3}([-*_])([ \t]*\1){2,}[ \t]*$`, Type: chroma.Keyword},
				{Pattern: `^([ \t]*)(>)`, Type: chroma.ByGroups(chroma.TextWhitespace, chroma.Keyword)},
				{Pattern: `^([ \t]*)([-*+]|\d{1,9}[.)])([ \t]+)(\[[ xX]\])?`, Type: chroma.ByGroups(chroma.TextWhitespace, chroma.Keyword, chroma.TextWhitespace, chroma.Keyword)},
				chroma.Include("inline"),
			},
			"inline": {
				{Pattern: `<!--`, Type: chroma.CommentMultiline, Mutator: chroma.Push("comment")},
				{Pattern: `\\.`, Type: chroma.Text},
				{Pattern: "`[^`\\n]+`", Type: chroma.LiteralStringBacktick},
				{Pattern: `\*\*[^*\n]+\*\*|__[^_\n]+__`, Type: chroma.GenericStrong},
				{Pattern: `\*[^*\s][^*\n]*\*|\b_[^_\s][^_\n]*_\b`, Type: chroma.GenericEmph},
				{Pattern: `~~[^~\n]+~~`, Type: chroma.GenericDeleted},
				{Pattern: `(!?\[)([^\]\n]*)(\]\()([^)\n]*)(\))`, Type: chroma.ByGroups(chroma.Text, chroma.NameTag, chroma.Text, chroma.NameAttribute, chroma.Text)},
				{Pattern: `<(https?|mailto):[^>\s]+>`, Type: chroma.NameAttribute},
				{Pattern: "[^`*_~\\[!<\\\\\\n]+|.|\\n", Type: chroma.Text},
			},
			"fence": {
				{Pattern: "^[ ]{0,3}(```+|~~~+)[ \\t]*(\\n|$)", Type: chroma.LiteralString, Mutator: chroma.Pop(1)},
				{Pattern: `[^\n]*\n|[^\n]+`, Type: chroma.Text},
			},
			"comment": {
				{Pattern: `-->`, Type: chroma.CommentMultiline, Mutator: chroma.Pop(1)},
				{Pattern: `[^-\n]+|-|\n`, Type: chroma.CommentMultiline},
			},
		}
	})
}
