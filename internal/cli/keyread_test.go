package cli

import (
	"encoding/base64"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/providertest"
	"github.com/tiny-agent/tiny-go/internal/statekey"
)

// The model's read tool runs as tiny-go, which can read its state key:
// it is refused there, in auto mode where nothing is asked, so the key
// never reaches the model (which could hand it to a command to seal
// forged state); a settings allow rule cannot undo it.
func TestReadToolNeverGivesTheStateKey(t *testing.T) {
	key, err := statekey.Key()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := statekey.Dir()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "key")
	h := newHookRun(t, `{"permissions":{"allow":["Read(//**)"]}}`,
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c1", "read", mustJSON(t, map[string]string{"path": path}))}},
		providertest.Reply{Text: "Done."},
	)
	if code, _, stderr := h.run("-p", "--approval", "auto", "read the key"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	got := toolMessage(h.srv.Requests()[1], "c1")
	if !strings.Contains(got, "denied") || !strings.Contains(got, "state key") {
		t.Fatalf("the read was not refused by tiny-go's own rule: %q", got)
	}
	raw, _ := os.ReadFile(path)
	for i, r := range h.srv.Requests() {
		body := string(r.Body)
		for _, form := range []string{string(raw), hex.EncodeToString(key), base64.StdEncoding.EncodeToString(key)} {
			if len(form) >= 16 && strings.Contains(body, form) {
				t.Fatalf("the key reached the model in request %d", i)
			}
		}
	}
}
