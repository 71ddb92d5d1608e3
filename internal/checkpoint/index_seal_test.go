package checkpoint

import (
	"bytes"
	"strings"
	"testing"
)

// Attack "index-forged": lines planted in a checkpoint index. A sealed
// line reads back as written; an unsealed one keeps only its paths
// inside the tree; one whose seal does not match is left out. Each
// refusal is one line.
func TestIndexLinesAreSealed(t *testing.T) {
	var buf bytes.Buffer
	real := Record{ToolStartedID: "t1", Phase: PhaseBefore, At: 1, Files: []File{{Path: "/outside/x", Hash: "sha256:aa"}, {Path: "in/y", Absent: true}}}
	if err := AppendRecords(&buf, real); err != nil {
		t.Fatal(err)
	}
	sealed := buf.String()
	buf.WriteString(`{"toolStartedId":"t2","phase":"before","at":2,"files":[{"path":"/etc/passwd","absent":true},{"path":"../up","absent":true},{"path":"ok","absent":true}]}` + "\n")
	buf.WriteString(strings.Replace(sealed, `"at":1`, `"at":9`, 1))
	recs, refused, err := ReadIndexChecked(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || len(recs[0].Files) != 2 || recs[0].Files[0].Path != "/outside/x" {
		t.Fatalf("the sealed line did not read back: %+v", recs)
	}
	if got := recs[1].Files; len(got) != 1 || got[0].Path != "ok" {
		t.Fatalf("an unsealed line kept paths outside the tree: %+v", got)
	}
	if len(refused) != 2 || !strings.Contains(refused[0], "line 2 carries no seal") || !strings.Contains(refused[0], "its 2 path(s) outside the tree") || !strings.Contains(refused[1], "line 3: its seal does not match") {
		t.Fatalf("refused: %q", refused)
	}
	for _, l := range refused {
		if strings.Contains(l, "\n") {
			t.Fatalf("not one line: %q", l)
		}
	}
}
