package undowire

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tiny-agent/tiny-go/internal/checkpoint"
	"github.com/tiny-agent/tiny-go/internal/store"
	"github.com/tiny-agent/tiny-go/internal/tools"
)

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

// newSession makes a session in a fresh working directory.
func newSession(t *testing.T) (string, *store.Store) {
	t.Helper()
	dir := t.TempDir()
	st, err := store.Create(dir, store.NewHeader{Provider: "p", Model: "m", EnvironmentIdentity: "e"}, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return dir, st
}

// TINY_CHECKPOINTS=off: no hook, no store opened, and the language
// servers are told checkpoints are off.
func TestCheckpointsOff(t *testing.T) {
	dir, st := newSession(t)
	var stderr strings.Builder
	u := New(Options{Cwd: dir, Getenv: env(map[string]string{"TINY_CHECKPOINTS": " OFF "}), Stderr: &stderr})
	if h := u.Hook(st.Path()); h != nil {
		t.Fatal("a hook with TINY_CHECKPOINTS=off")
	}
	if _, err := u.Changed(context.Background(), "x"); err == nil || !strings.Contains(err.Error(), "checkpoints are off") {
		t.Fatalf("Changed = %v", err)
	}
	if u.TxUsable() {
		t.Fatal("transactions usable without a recorder")
	}
	if u.Transactions().For(context.Background()) != nil {
		t.Fatal("a transaction without a recorder")
	}
	if _, err := os.Stat(filepath.Join(dir, ".tiny-agent", "checkpoints")); err == nil {
		t.Fatal("the checkpoint store was opened")
	}
	if stderr.Len() != 0 {
		t.Fatalf("stderr: %q", stderr.String())
	}
	if err := u.Close(); err != nil {
		t.Fatal(err)
	}
}

// A cap that cannot be read turns checkpoints off with one line; the run
// goes on.
func TestBadCapIsOneLine(t *testing.T) {
	dir, st := newSession(t)
	var stderr strings.Builder
	u := New(Options{Cwd: dir, Getenv: env(map[string]string{"TINY_CHECKPOINT_CAP": "lots"}), Stderr: &stderr})
	if h := u.Hook(st.Path()); h != nil {
		t.Fatal("a hook with a bad cap")
	}
	if out := stderr.String(); !strings.HasPrefix(out, "tiny-go: checkpoints are off: ") || strings.Count(out, "\n") != 1 {
		t.Fatalf("stderr: %q", out)
	}
}

// A write's checkpoints go to the session's index, Changed names the file
// (what the language servers check), and a resume of a session whose file
// lacks that call is refused while a !command's key is not a call.
func TestHookRecordsIntoTheSessionIndex(t *testing.T) {
	dir, st := newSession(t)
	var stderr strings.Builder
	u := New(Options{Cwd: dir, Getenv: env(map[string]string{"TINY_OVERLAY": "off"}), Stderr: &stderr})
	defer u.Close()
	if err := CheckNotTruncated(st); err != nil {
		t.Fatalf("no index yet: %v", err)
	}
	hook := u.Hook(st.Path())
	if hook == nil {
		t.Fatalf("no hook: %s", stderr.String())
	}
	ctx := context.Background()
	after := hook(ctx, "call-1", "write", jsontext.Value(`{"path":"a.txt","content":"hi"}`))
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("hi"), 0o644); err != nil {
		t.Fatal(err)
	}
	after()
	changed, err := u.Changed(ctx, "call-1")
	if err != nil || !slices.Contains(changed, "a.txt") {
		t.Fatalf("Changed = %v, %v", changed, err)
	}
	data, err := store.ReadSidecarFile(st.Path(), checkpoint.IndexFile)
	if err != nil || !strings.Contains(string(data), "call-1") {
		t.Fatalf("index %q, %v", data, err)
	}
	err = CheckNotTruncated(st)
	if err == nil || !strings.Contains(err.Error(), "was truncated") || !strings.Contains(err.Error(), "call-1") {
		t.Fatalf("a session without the indexed call: %v", err)
	}

	// A new session (a fork after /rewind) gets a recorder of its own; a
	// !command's checkpoint there does not look like a lost call.
	_, fork := newSession(t)
	shell := u.Hook(fork.Path())
	shell(ctx, userShellKey+"1", "write", jsontext.Value(`{"path":"b.txt"}`))()
	if err := CheckNotTruncated(fork); err != nil {
		t.Fatalf("a !command's checkpoint: %v", err)
	}
}

// Where commands can be transactions, what refuses the overlay is said
// once, as the fallback line: TINY_OVERLAY=off, or no sandbox.
func TestOverlayRefusedFallsBack(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("transactions are Linux's")
	}
	for _, c := range []struct {
		vars map[string]string
		want string
	}{
		{map[string]string{"TINY_OVERLAY": "off"}, "TINY_OVERLAY=off"},
		{map[string]string{}, "the sandbox is off"},
	} {
		dir, st := newSession(t)
		var stderr strings.Builder
		u := New(Options{Cwd: dir, Getenv: env(c.vars), Stderr: &stderr})
		if u.Hook(st.Path()) == nil {
			t.Fatalf("no hook: %s", stderr.String())
		}
		if u.TxUsable() {
			t.Fatalf("%v: transactions usable", c.vars)
		}
		if out := stderr.String(); !strings.Contains(out, "commands run without an overlay ("+c.want) {
			t.Fatalf("%v: stderr %q", c.vars, out)
		}
		ctx := tools.WithStartedID(context.Background(), "call-1")
		if u.Transactions().For(ctx) != nil || u.Transactions().Blocked(ctx) != nil {
			t.Fatal("a transaction where the overlay was refused")
		}
		u.Close()
	}
}

type fakeShell struct{ ran string }

func (f *fakeShell) Definition() tools.Definition { return tools.Definition{Name: "bash"} }
func (f *fakeShell) Replay() tools.Replay         { return tools.Replay{} }
func (f *fakeShell) Run(ctx context.Context, _ jsontext.Value) tools.Result {
	f.ran = tools.StartedID(ctx)
	return tools.Result{Content: "done"}
}

// A !command is checkpointed like a bash call, under its own key, with
// the after checkpoint taken once it ran.
func TestUserShellIsCheckpointed(t *testing.T) {
	sh := &fakeShell{}
	var got []string
	before := func(_ context.Context, id, tool string, _ jsontext.Value) func() {
		got = append(got, "before "+id+" "+tool)
		return func() { got = append(got, "after ran="+sh.ran) }
	}
	res := RunUserShell(context.Background(), before, sh, "7", jsontext.Value(`{"command":"ls"}`))
	want := []string{"before shell:7 bash", "after ran=shell:7"}
	if res.Content != "done" || !slices.Equal(got, want) {
		t.Fatalf("got %q, %v; want %q", res.Content, got, want)
	}
	if res := RunUserShell(context.Background(), nil, sh, "8", nil); res.Content != "done" || sh.ran != "shell:8" {
		t.Fatal("without checkpoints the command must still run under its key")
	}
}
