package termmd

import (
	"fmt"
	"strings"
	"testing"
)

// mixedReply is a reply of about n source lines in the shapes a model
// writes: headings, paragraphs with inline markup, lists, code blocks,
// tables and quotes, repeated.
func mixedReply(n int) string {
	var b strings.Builder
	lines := 0
	for section := 1; lines < n; section++ {
		fmt.Fprintf(&b, "## Section %d\n\n", section)
		for i := range 8 {
			fmt.Fprintf(&b, "The **quick** brown fox `jumps(%d)` over the _lazy_ dog, see [the docs](https://example.com/d/%d) and snake_case_names.\n", i, i)
		}
		b.WriteString("\n- first item with `code`\n- second item\n  - nested *item* with ~~old~~ text\n- [x] a task\n\n")
		b.WriteString("1. one\n2. two\n3. three\n\n```go\nfunc main() {\n\tfmt.Println(\"hello\")\n}\n```\n\n")
		b.WriteString("| name | value | note |\n|---|:---:|--:|\n| a | `1` | **bold** |\n| b | 2 | https://example.com |\n\n")
		b.WriteString("> a quote with *emphasis*\n> over two lines\n\n")
		lines += 34
	}
	return b.String()
}

// BenchmarkRender renders a 2,000-line mixed reply whole, as the UI does
// for a committed block and as a finished reply is rendered once.
func BenchmarkRender(b *testing.B) {
	src := mixedReply(2000)
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		Render(src, 100, false)
	}
}
