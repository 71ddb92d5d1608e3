package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/cli/assemble"
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
	a := &assemble.Runner{Store: st}
	if text, sent := a.WithShell("hi"); text != "hi" {
		t.Fatalf("no journal: %q", text)
	} else {
		sent()
	}
	must := func(r assemble.ShellRecord) {
		t.Helper()
		if err := assemble.AppendShell(path, r); err != nil {
			t.Fatal(err)
		}
	}
	must(assemble.ShellRecord{ID: "1", State: "started", Command: "ls"})
	must(assemble.ShellRecord{ID: "1", State: "done", Command: "ls", Output: "a.txt\n"})
	must(assemble.ShellRecord{ID: "2", State: "started", Command: "make deploy"}) // the crash
	sidecar, _ := store.SidecarDir(path, false)
	f, _ := os.OpenFile(filepath.Join(sidecar, assemble.ShellFile), os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(`{"id":"3","sta`) // torn
	f.Close()

	text, sent := a.WithShell("what now?")
	want := "I ran `ls` in the shell:\n```\na.txt\n```\n\n" +
		"I ran `make deploy` in the shell, but tiny-go stopped while it ran: its output is unknown and it was not run again.\n\n" +
		"what now?"
	if text != want {
		t.Fatalf("prompt:\n%q\nwant\n%q", text, want)
	}
	sent()
	if text, _ := a.WithShell("next"); text != "next" {
		t.Fatalf("sent exchanges went again: %q", text)
	}
	if !strings.Contains(string(mustRead(t, filepath.Join(sidecar, assemble.ShellFile))), `"state":"sent"`) {
		t.Fatal("no sent record")
	}
}

// A new session whose only input so far is a !command is kept at exit,
// with the resume hint, so the command's output still reaches the model.
func TestShellOnlySessionKept(t *testing.T) {
	dir := t.TempDir()
	st, err := store.Create(dir, store.NewHeader{Provider: "p", Model: "m", EnvironmentIdentity: "e"}, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	a := &assemble.Runner{Store: st, Created: true}
	if a.Resumable() {
		t.Fatal("an empty new session is resumable")
	}
	if err := assemble.AppendShell(st.Path(), assemble.ShellRecord{ID: "1", State: "started", Command: "ls"}); err != nil {
		t.Fatal(err)
	}
	if !a.Resumable() {
		t.Fatal("a session holding a !command is not resumable")
	}
	path := st.Path()
	a.DiscardCreated()
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the session was removed: %v", err)
	}
	st.Close()
}
