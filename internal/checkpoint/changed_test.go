package checkpoint

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tiny-agent/tiny-go/internal/checkpoint/checkpointtest"
)

// TestChangedListsWhatACommandChanged: the paths a command created,
// rewrote, moved or removed, and none it left alone, with and without
// git and tracking.
func TestChangedListsWhatACommandChanged(t *testing.T) {
	for _, tc := range []struct {
		name  string
		git   bool
		track bool
	}{{"plain", false, false}, {"git", true, false}, {"tracked", false, true}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if tc.git {
				checkpointtest.Sh(t, dir, "git init -q")
			}
			seed(t, dir)
			k := newTask(t, dir, Options{})
			defer k.store.Close()
			if tc.track {
				k.store.Track(func(string) {})
			}
			const cmd = "sed -i s/old/new/ doc.md && mv src/main.go src/app.go && echo x > gen.go"
			after := k.rec.BeforeEffect(context.Background(), "call-1", "bash", jsontext.Value(`{"command":"x"}`))
			checkpointtest.Sh(t, dir, cmd)
			after()
			got, err := k.rec.Changed(context.Background(), "call-1")
			if err != nil {
				t.Fatal(err)
			}
			want := []string{"doc.md", "gen.go", "src/app.go", "src/main.go"}
			if !slices.Equal(got, want) {
				t.Fatalf("changed = %q, want %q", got, want)
			}
			if _, err := k.rec.Changed(context.Background(), "call-1"); !errors.Is(err, errNotKept) {
				t.Fatalf("a second Changed = %v, want errNotKept (the records are forgotten)", err)
			}
		})
	}
}
