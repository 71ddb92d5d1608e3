package highlight

import (
	"strings"

	"github.com/alecthomas/chroma/v2"
)

// Chroma keeps a lexer's state (its stack of states) inside the iterator
// it returns, and starts every lex from one named state. To go on where
// a chunk of a block stopped, each lexer is rebuilt from its rules with
// two additions:
//
//   - every rule's emitter also reports the stack when the rule has
//     consumed the whole text (the text ends at a line's end, so that is
//     the state at the start of the next line): a token of type
//     stackToken, removed by Language.tokens;
//   - lexing starts in resumeState, which is root with one rule first:
//     a marker at the very start of the text naming a stack puts that
//     stack in place, emitting nothing (the marker ends with a newline,
//     so that the code's first line starts a line).
//
// The marker's characters are from Unicode's private use area, which
// code has no reason to contain (Lines removes them from the code).

const (
	resumeState = "tiny-go resume"
	resumeOpen  = "\uE000"
	resumeClose = "\uE001"
	stackSep    = "\uE002"
)

// stackToken is the type of the token reporting the stack; chroma's own
// types are small positive numbers and EOF (0).
const stackToken chroma.TokenType = -1 << 20

// resumable rebuilds lx with the rules above.
func resumable(lx *chroma.RegexLexer) *chroma.RegexLexer {
	return chroma.MustNewLexer(lx.Config(), func() chroma.Rules {
		base, err := lx.Rules()
		if err != nil {
			panic(err) // recovered by Language.tokens: the block stays plain
		}
		rules := base.Clone()
		for state, rs := range rules {
			for i := range rs {
				rs[i].Type = reportStack{inner: rs[i].Type}
			}
			rules[state] = rs
		}
		rules[resumeState] = []chroma.Rule{
			{
				// The newline keeps "^" matching at the first line.
				Pattern: resumeOpen + "([^" + resumeClose + "]*)" + resumeClose + "\n",
				Mutator: chroma.MutatorFunc(restoreStack),
			},
			chroma.Include("root"),
		}
		return rules
	})
}

// restoreStack puts the stack the marker names in place, if every state
// in it exists (else the lex starts at root).
func restoreStack(st *chroma.LexerState) error {
	stack := strings.Split(st.Groups[1], stackSep)
	for _, s := range stack {
		if _, ok := st.Rules[s]; !ok {
			return nil
		}
	}
	st.Stack = stack
	return nil
}

// noTokens is an empty iterator (chroma calls what an emitter returns).
func noTokens() chroma.Token { return chroma.EOF }

// reportStack emits what inner emits, then, when the rule consumed the
// text to its end, the stack.
type reportStack struct {
	inner chroma.Emitter
}

func (r reportStack) Emit(groups []string, st *chroma.LexerState) chroma.Iterator {
	var it chroma.Iterator
	if r.inner != nil {
		it = r.inner.Emit(groups, st)
	}
	if st.Pos != len(st.Text) {
		if it == nil {
			return noTokens
		}
		return it
	}
	report := chroma.Literator(chroma.Token{Type: stackToken, Value: strings.Join(st.Stack, stackSep)})
	if it == nil {
		return report
	}
	return chroma.Concaterator(it, report)
}
