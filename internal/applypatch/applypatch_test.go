package applypatch

import (
	"strings"
	"testing"
)

func TestEditsOnePerSection(t *testing.T) {
	diff := "@@ func a() {\n line1\n-old1\n+new1\n line2\n@@\n ctx\n-gone\n*** End of File\n"
	edits, err := Edits(diff)
	if err != nil {
		t.Fatal(err)
	}
	want := []Edit{{"line1\nold1\nline2\n", "line1\nnew1\nline2\n"}, {"ctx\ngone\n", "ctx\n"}}
	if len(edits) != len(want) || edits[0] != want[0] || edits[1] != want[1] {
		t.Fatalf("edits %q", edits)
	}
	// Applied to a file, the edits give what the patch means.
	file := "func a() {\nline1\nold1\nline2\n}\nctx\ngone\n"
	for _, e := range edits {
		if strings.Count(file, e.OldText) != 1 {
			t.Fatalf("old text %q not unique in the file", e.OldText)
		}
		file = strings.Replace(file, e.OldText, e.NewText, 1)
	}
	if file != "func a() {\nline1\nnew1\nline2\n}\nctx\n" {
		t.Fatalf("patched file %q", file)
	}
}

func TestEditsRejects(t *testing.T) {
	for _, diff := range []string{"", "@@\n context only\n", "@@\n+added without context\n", "*** Begin Patch\n", "garbage\n"} {
		if _, err := Edits(diff); err == nil {
			t.Errorf("Edits(%q) succeeded", diff)
		}
	}
}

func TestContent(t *testing.T) {
	if got := Content("+a\n+\n+b\r\n"); got != "a\n\nb\n" {
		t.Fatalf("Content = %q", got)
	}
}

// FuzzEdits: a diff either fails or gives edits whose old text is not
// empty and that differ from their new text in at least one section;
// applying each edit to its own old text gives its new text.
func FuzzEdits(f *testing.F) {
	f.Add("@@ x\n a\n-b\n+c\n")
	f.Add("@@\n a\n-b\n*** End of File\n@@\n+d\n q\n")
	f.Add(" a\r\n-b\r\n+c\r\n")
	f.Fuzz(func(t *testing.T, diff string) {
		edits, err := Edits(diff)
		if err != nil {
			return
		}
		if len(edits) == 0 {
			t.Fatal("no edits and no error")
		}
		for _, e := range edits {
			if e.OldText == "" || !strings.HasSuffix(e.OldText, "\n") {
				t.Fatalf("old text %q is empty or not whole lines", e.OldText)
			}
			if e.NewText != "" && !strings.HasSuffix(e.NewText, "\n") {
				t.Fatalf("new text %q is not whole lines", e.NewText)
			}
		}
	})
}
