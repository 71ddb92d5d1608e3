package responses

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/provider"
)

// FuzzReadStream: no stream panics the decoder, and a settled reply is
// well formed (a finish reason, named calls, kept items an array).
func FuzzReadStream(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.sse"))
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		resp, err := readStream(bytes.NewReader(data), "", func(provider.Delta) {})
		if err != nil {
			return
		}
		if resp.FinishReason == "" {
			t.Fatal("a settled reply without a finish reason")
		}
		if resp.ReasoningDetails != nil && !resp.ReasoningDetails.IsValid() {
			t.Fatalf("kept items are not valid JSON: %s", resp.ReasoningDetails)
		}
	})
}
