package highlight

import "github.com/alecthomas/chroma/v2"

// goLexer is Go, by rules of our own: chroma writes its Go lexer in Go,
// inside the lexers package that is not linked (see the package comment).
// Raw strings and block comments are states, so that one spanning lines
// streamed in chunks stays one (resume.go).
func goLexer() *chroma.RegexLexer {
	return chroma.MustNewLexer(&chroma.Config{
		Name:      "Go",
		Aliases:   []string{"go", "golang"},
		Filenames: []string{"*.go"},
	}, func() chroma.Rules {
		ident := `[\p{L}_][\p{L}\p{N}_]*`
		escape := `\\([abfnrtv\\'"]|[0-7]{3}|x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8})`
		return chroma.Rules{
			"root": {
				{Pattern: `\n`, Type: chroma.TextWhitespace},
				{Pattern: `[^\S\n]+`, Type: chroma.TextWhitespace},
				{Pattern: `//[^\n]*`, Type: chroma.CommentSingle},
				{Pattern: `/\*`, Type: chroma.CommentMultiline, Mutator: chroma.Push("comment")},
				{Pattern: `(package|import)\b`, Type: chroma.KeywordNamespace},
				{Pattern: `(func|var|const|type|struct|interface|map|chan)\b`, Type: chroma.KeywordDeclaration},
				{Pattern: `(break|case|continue|default|defer|else|fallthrough|for|go|goto|if|range|return|select|switch)\b`, Type: chroma.Keyword},
				{Pattern: `(true|false|nil|iota)\b`, Type: chroma.KeywordConstant},
				{Pattern: `(append|cap|clear|close|complex|copy|delete|imag|len|make|max|min|new|panic|print|println|real|recover)\b(?=\()`, Type: chroma.NameBuiltin},
				{Pattern: `(any|bool|byte|comparable|complex64|complex128|error|float32|float64|int|int8|int16|int32|int64|rune|string|uint|uint8|uint16|uint32|uint64|uintptr)\b`, Type: chroma.KeywordType},
				{Pattern: `0[xX][0-9a-fA-F_]+(\.[0-9a-fA-F_]*)?([pP][+-]?[0-9_]+)?i?`, Type: chroma.LiteralNumberHex},
				{Pattern: `0[bB][01_]+i?`, Type: chroma.LiteralNumberBin},
				{Pattern: `0[oO][0-7_]+i?`, Type: chroma.LiteralNumberOct},
				{Pattern: `(\d[\d_]*(\.[\d_]*)?|\.\d[\d_]*)([eE][+-]?\d[\d_]*)?i?`, Type: chroma.LiteralNumber},
				{Pattern: `'(` + escape + `|[^\\'\n])'`, Type: chroma.LiteralStringChar},
				{Pattern: "`", Type: chroma.LiteralStringBacktick, Mutator: chroma.Push("raw")},
				{Pattern: `"`, Type: chroma.LiteralString, Mutator: chroma.Push("string")},
				{Pattern: `(` + ident + `)([^\S\n]*)(\()`, Type: chroma.ByGroups(chroma.NameFunction, chroma.TextWhitespace, chroma.Punctuation)},
				{Pattern: `(<<=|>>=|&\^=|\.\.\.|&&|\|\||<-|\+\+|--|==|!=|<=|>=|:=|<<|>>|&\^|[-+*/%&|^]=?|[<>=!~])`, Type: chroma.Operator},
				{Pattern: `[(){}\[\],;.:]`, Type: chroma.Punctuation},
				{Pattern: ident, Type: chroma.Name},
			},
			"comment": {
				{Pattern: `\*/`, Type: chroma.CommentMultiline, Mutator: chroma.Pop(1)},
				{Pattern: `[^*\n]+|\*|\n`, Type: chroma.CommentMultiline},
			},
			"raw": {
				{Pattern: "`", Type: chroma.LiteralStringBacktick, Mutator: chroma.Pop(1)},
				{Pattern: "[^`\\n]+|\\n", Type: chroma.LiteralStringBacktick},
			},
			"string": {
				{Pattern: escape, Type: chroma.LiteralStringEscape},
				{Pattern: `"`, Type: chroma.LiteralString, Mutator: chroma.Pop(1)},
				{Pattern: `\n`, Type: chroma.TextWhitespace, Mutator: chroma.Pop(1)}, // unterminated: ends with the line
				{Pattern: `[^"\\\n]+|\\`, Type: chroma.LiteralString},
			},
		}
	})
}
