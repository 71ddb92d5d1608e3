package cli

import (
	"os"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/cli/assemble"
	"github.com/tiny-agent/tiny-go/internal/cli/sessionopen"
	"github.com/tiny-agent/tiny-go/internal/store"
)

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
	if err := sessionopen.AppendShell(st.Path(), sessionopen.ShellRecord{ID: "1", State: "started", Command: "ls"}); err != nil {
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
