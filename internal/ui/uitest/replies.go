package uitest

import (
	"fmt"
	"regexp"
	"strings"
)

// Reply is a Markdown reply of a shape that is hard to stream into a
// terminal, with n numbered lines, each tagged [Xnnn] (X the shape's
// letter) so that a capture of the terminal can be checked line by line:
//   - "paragraph" (P): one paragraph of n source lines;
//   - "code" (C): a fenced Go block of n lines between two paragraphs;
//   - "table" (T): a five-column table of n rows;
//   - "cjk" (J): a list of CJK text and emoji under headings.
func Reply(shape string, n int) string {
	var b strings.Builder
	switch shape {
	case "paragraph":
		for i := 1; i <= n; i++ {
			fmt.Fprintf(&b, "[P%03d] the quick brown fox jumps over the lazy dog\n", i)
		}
	case "code":
		b.WriteString("Here is the code:\n\n```go\n")
		for i := 1; i <= n; i++ {
			fmt.Fprintf(&b, "x%d := compute(%d) // [C%03d]\n", i, i, i)
		}
		b.WriteString("```\n\nThat is all.\n")
	case "table":
		b.WriteString("A wide table:\n\n| id | name | description | status | owner |\n|---|---|---|---|---|\n")
		for i := 1; i <= n; i++ {
			fmt.Fprintf(&b, "| [T%03d] | item %d | a long description of item %d | ok | team %d |\n", i, i, i, i%7)
		}
		b.WriteString("\nDone.\n")
	case "cjk":
		for i := 1; i <= n; i++ {
			if i%10 == 1 {
				fmt.Fprintf(&b, "\n## 第 %d 节 😀\n\n", i)
			}
			fmt.Fprintf(&b, "- [J%03d] 中文文本与 emoji 🎉 混合的一行，宽字符 ｗｉｄｅ\n", i)
		}
	default:
		panic("uitest: unknown reply shape " + shape)
	}
	return b.String()
}

var tagRE = regexp.MustCompile(`\[([A-Z])(\d{3})\]`)

// CheckTags reports what is wrong with the tags of letter in text: each of
// 1..n must appear exactly once, in order. "" means nothing is wrong.
func CheckTags(text string, letter byte, n int) string {
	var got []string
	for _, m := range tagRE.FindAllStringSubmatch(text, -1) {
		if m[1][0] == letter {
			got = append(got, m[2])
		}
	}
	want := make([]string, n)
	for i := range want {
		want[i] = fmt.Sprintf("%03d", i+1)
	}
	if strings.Join(got, ",") == strings.Join(want, ",") {
		return ""
	}
	seen := map[string]int{}
	for _, g := range got {
		seen[g]++
	}
	var missing, doubled []string
	for _, w := range want {
		switch seen[w] {
		case 0:
			missing = append(missing, w)
		case 1:
		default:
			doubled = append(doubled, w)
		}
	}
	return fmt.Sprintf("%c tags: %d found, want %d; missing %v; doubled %v; order %v", letter, len(got), n, missing, doubled, got)
}
