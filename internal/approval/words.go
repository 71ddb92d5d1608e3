package approval

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// CommandWords returns the first word of every simple command in a shell
// command line, including those inside pipelines, lists, subshells,
// functions and command substitutions: "cd x && go test | tee log" is
// cd, go and tee. ok is false when the line does not parse or some
// command's name is not a plain word (`$cmd`, `"$(which x)"`), because
// then no "always" rule can say what it runs.
func CommandWords(command string) (words []string, ok bool) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(command), "")
	if err != nil {
		return nil, false
	}
	ok = true
	syntax.Walk(f, func(n syntax.Node) bool {
		if !ok {
			return false
		}
		ce, isCall := n.(*syntax.CallExpr)
		if !isCall || len(ce.Args) == 0 {
			return true
		}
		w := ce.Args[0].Lit()
		if w == "" {
			ok = false
			return false
		}
		words = append(words, w)
		return true
	})
	if !ok {
		return nil, false
	}
	return words, true
}
