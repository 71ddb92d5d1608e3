package anthropic

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/provider"
)

// Every fixture decodes to the same reply (or the same error) however its
// stream is split: at every byte, as two reads.
func TestFixturesSplitAtEveryByte(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.sse"))
	if len(files) == 0 {
		t.Fatal("no fixtures")
	}
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		whole, wholeErr := readStream(bytes.NewReader(data), "", nil)
		for i := 0; i < len(data); i++ {
			var shown bytes.Buffer
			r := io.MultiReader(bytes.NewReader(data[:i]), bytes.NewReader(data[i:]))
			resp, err := readStream(r, "", func(d provider.Delta) { shown.WriteString(d.Content) })
			if !reflect.DeepEqual(resp, whole) || errText(err) != errText(wholeErr) {
				t.Fatalf("%s split at %d: %+v, %v; whole: %+v, %v", name, i, resp, err, whole, wholeErr)
			}
			if resp.Content != nil && shown.String() != *resp.Content {
				t.Fatalf("%s split at %d: shown %q", name, i, shown.String())
			}
		}
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
