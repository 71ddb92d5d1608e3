// Package highlight colours source code for the terminal with chroma's
// core package alone.
//
// Chroma's lexers and styles packages are not linked: Go runs every
// linked package's initialisation at every start, and theirs parses every
// lexer and style chroma has (tens of milliseconds, docs/performance.md
// §17). Here nothing happens at start: the lexer definitions tiny-go
// uses are chroma's own XML files, embedded (lexers/, copied by
// go generate, chroma's licence beside them), read the first time a
// block is highlighted; Go and Markdown, which chroma writes in Go, have
// rules of our own (golang.go, markdown.go); the style is a small table
// here (style.go).
//
// Highlighting can go on where it stopped: Lines returns the lexer's
// state at the end of the lines it coloured, so a block streamed in
// chunks is coloured as if it were lexed whole (a comment or string
// spanning a chunk boundary stays one), at the cost of the new lines
// only.
package highlight

import (
	"embed"
	"io/fs"
	"path"
	"strings"
	"sync"

	"github.com/alecthomas/chroma/v2"
	"github.com/charmbracelet/colorprofile"
)

//go:generate go run ./gen

//go:embed lexers/*.xml
var lexerFiles embed.FS

var (
	registryOnce sync.Once
	registry     *chroma.LexerRegistry
)

// lexers builds the registry on first use: every embedded definition's
// configuration (its name, aliases and file patterns; the rules are read
// when the language is first highlighted), and our Go and Markdown.
func lexers() *chroma.LexerRegistry {
	registryOnce.Do(func() {
		reg := chroma.NewLexerRegistry()
		files, _ := fs.ReadDir(lexerFiles, "lexers")
		for _, f := range files {
			lx, err := chroma.NewXMLLexer(lexerFiles, path.Join("lexers", f.Name()))
			if err != nil {
				continue // TestEveryLexerLoads names it
			}
			reg.Register(resumable(lx))
		}
		reg.Register(resumable(goLexer()))
		reg.Register(resumable(markdownLexer()))
		registry = reg
	})
	return registry
}

// Language is a language tiny-go can highlight.
type Language struct {
	lexer chroma.Lexer
}

// Lookup finds the language a fenced block's info string names by its
// first word: a name or alias ("go", "py", "c++", "shell"), or a file
// extension ("rs", "yml"). It returns nil for a language it does not know.
func Lookup(info string) *Language {
	word, _, _ := strings.Cut(strings.TrimSpace(info), " ")
	word = strings.TrimPrefix(strings.ToLower(word), ".")
	if word == "" || strings.ContainsAny(word, "*?[]\\/") {
		return nil // not a name: the registry would read it as a pattern
	}
	if alias, ok := aliases[word]; ok {
		word = alias
	}
	lx := lexers().Get(word)
	if lx == nil {
		return nil
	}
	return &Language{lexer: lx}
}

// aliases are names replies use that chroma's definitions do not list.
var aliases = map[string]string{
	"shell": "bash", "console": "bash", "terminal": "bash",
	"jsx": "javascript", "mjs": "javascript", "cjs": "javascript", "node": "javascript",
	"tsx": "typescript", "mts": "typescript", "cts": "typescript",
	"jsonc": "json", "json5": "json",
	"patch": "diff", "udiff": "diff",
	"dockerfile": "docker", "make": "makefile",
	"h": "c", "hpp": "c++", "cc": "c++", "cxx": "c++", "cs": "c#", "csharp": "c#",
	"htm": "html", "svg": "xml", "proto": "protobuf",
	"postgres": "sql", "postgresql": "sql", "sqlite": "sql", "mysql": "sql",
	"conf": "ini", "cfg": "ini",
}

// Name is the language's name, as the label above a block shows it.
func (l *Language) Name() string { return l.lexer.Config().Name }

// State is where highlighting stopped: the lexer's stack of states at the
// end of a line, and the lines since then whose end had none (a token
// spans them: chroma's C and JavaScript match a block comment with one
// pattern). The zero State is the start of a block.
type State struct {
	stack   string
	pending []string
}

// maxPending bounds the lines lexed again: past it, lexing starts over
// from the language's first state.
const maxPending = 200

// Lines colours code (lines joined by "\n") for profile and the
// terminal's background, going on from state; it returns one string per
// line of code, each self-contained (every colour it sets is reset by its
// end), and the state after the last. Profiles below ANSI (NO_COLOR, no
// terminal) get the lines as they are.
//
// The lines of a State's pending part are lexed again with code, so that
// a token spanning them is found once it is complete; they were already
// returned (and printed) as they were lexed then.
func (l *Language) Lines(code string, from State, profile colorprofile.Profile, light bool) (lines []string, to State) {
	plain := strings.Split(code, "\n")
	if profile < colorprofile.ANSI || strings.ContainsAny(code, resumeOpen+resumeClose+stackSep) {
		return plain, from
	}
	skip := len(from.pending)
	text := code
	if skip > 0 {
		text = strings.Join(from.pending, "\n") + "\n" + code
	}
	tokens, stack, ok := l.tokens(text+"\n", from.stack)
	if !ok {
		return plain, State{}
	}
	to = State{stack: stack}
	if stack == "" {
		// No state at the end: keep the lines to lex them again.
		to = State{stack: from.stack, pending: append(append([]string(nil), from.pending...), plain...)}
		if len(to.pending) > maxPending {
			to = State{}
		}
	}
	st := styleFor(profile, light)
	out := make([]string, 0, len(plain))
	var b strings.Builder
	set := "" // the colour in force on the current line
	endLine := func() {
		if set != "" {
			b.WriteString("\x1b[0m")
		}
		out = append(out, b.String())
		b.Reset()
		set = ""
	}
	for _, t := range tokens {
		want := st.sgr(t.Type)
		for i, part := range strings.Split(t.Value, "\n") {
			if i > 0 {
				endLine()
			}
			if part == "" {
				continue
			}
			if want != set {
				if set != "" {
					b.WriteString("\x1b[0m")
				}
				if want != "" {
					b.WriteString("\x1b[" + want + "m")
				}
				set = want
			}
			b.WriteString(part)
		}
	}
	// The text ends with a newline, so the last line is empty and unset.
	if b.Len() > 0 || len(out) != skip+len(plain) {
		return plain, State{} // cannot happen: the tokens cover the text
	}
	return out[skip:], to
}

// mayContinue reports whether a token of type t that ends the text at
// the lexer's first state may have ended only because the text did: some
// definitions match an unclosed block comment to the end of the text in
// one pattern, and the next lines would then be lexed as code.
func mayContinue(t chroma.TokenType) bool {
	switch t {
	case chroma.CommentMultiline, chroma.LiteralStringDoc, chroma.LiteralStringHeredoc, chroma.LiteralStringBacktick:
		return true
	}
	return false
}

// tokens lexes text (whole lines, ending with a newline) from the stack
// (a State's, "" for the start), returning its tokens and the stack at
// its end, "" when the last token did not end there. ok is false when the
// lexer failed (a definition chroma cannot run): the text stays plain.
func (l *Language) tokens(text, from string) (tokens []chroma.Token, to string, ok bool) {
	defer func() {
		if recover() != nil {
			tokens, to, ok = nil, "", false
		}
	}()
	prefix := ""
	if from != "" {
		prefix = resumeOpen + from + resumeClose + "\n"
	}
	it, err := l.lexer.Tokenise(&chroma.TokeniseOptions{State: resumeState}, prefix+text)
	if err != nil {
		return nil, "", false
	}
	captured := -1
	for t := it(); t != chroma.EOF; t = it() {
		if t.Type == stackToken {
			captured, to = len(tokens), t.Value
			continue
		}
		if t.Value != "" {
			tokens = append(tokens, t)
		}
	}
	if captured != len(tokens) || !strings.Contains(to, stackSep) && len(tokens) > 0 && mayContinue(tokens[len(tokens)-1].Type) {
		to = ""
	}
	return tokens, to, true
}
