package sessionopen

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/store"
)

// The shell journal: a finished !command goes with the next prompt once;
// one a crash interrupted (started, never done) is reported, never run
// again; a torn last line is passed by.
func TestShellJournal(t *testing.T) {
	dir := t.TempDir()
	st, err := store.Create(dir, store.NewHeader{Provider: "p", Model: "m", EnvironmentIdentity: "e"}, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	path := st.Path()
	if text, sent := WithShell(path, "hi"); text != "hi" {
		t.Fatalf("no journal: %q", text)
	} else {
		sent()
	}
	must := func(r ShellRecord) {
		t.Helper()
		if err := AppendShell(path, r); err != nil {
			t.Fatal(err)
		}
	}
	must(ShellRecord{ID: "1", State: "started", Command: "ls"})
	must(ShellRecord{ID: "1", State: "done", Command: "ls", Output: "a.txt\n"})
	must(ShellRecord{ID: "2", State: "started", Command: "make deploy"}) // the crash
	sidecar, _ := store.SidecarDir(path, false)
	f, _ := os.OpenFile(filepath.Join(sidecar, ShellFile), os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(`{"id":"3","sta`) // torn
	f.Close()

	text, sent := WithShell(path, "what now?")
	want := "I ran `ls` in the shell:\n```\na.txt\n```\n\n" +
		"I ran `make deploy` in the shell, but tiny-go stopped while it ran: its output is unknown and it was not run again.\n\n" +
		"what now?"
	if text != want {
		t.Fatalf("prompt:\n%q\nwant\n%q", text, want)
	}
	sent()
	if text, _ := WithShell(path, "next"); text != "next" {
		t.Fatalf("sent exchanges went again: %q", text)
	}
	data, _ := os.ReadFile(filepath.Join(sidecar, ShellFile))
	if !strings.Contains(string(data), `"state":"sent"`) {
		t.Fatal("no sent record")
	}
}
