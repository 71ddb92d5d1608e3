package reasoning

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tiny-agent/tiny-go/internal/store"
)

func newSession(t *testing.T) string {
	t.Helper()
	s, err := store.Create(t.TempDir(), store.NewHeader{Provider: "openrouter", Model: "m", EnvironmentIdentity: "e"}, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s.Path()
}

func TestPutAndReopen(t *testing.T) {
	path := newSession(t)
	s, err := Open(path, "a1", "m1", true)
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := store.SidecarDir(path, false); d != "" {
		t.Fatal("Open created the sidecar directory before any Put")
	}
	details := jsontext.Value(`[ {"type":"reasoning.encrypted","data":"\u00e9\/x"} ]`)
	if err := s.Put("e1", details); err != nil {
		t.Fatal(err)
	}
	if err := s.Put("e2", jsontext.Value(`{"not":"an array"}`)); err == nil {
		t.Fatal("Put accepted a non-array")
	}
	if err := s.Put("e3", nil); err != nil {
		t.Fatal(err)
	}
	s.Close()

	// A crash mid-write leaves a torn line; it is ignored and cut off.
	dir, err := store.SidecarDir(path, false)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, FileName)
	f, err := os.OpenFile(file, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"entryId":"torn","adapter":"a1","model":"m1","details":[`)
	f.Close()

	s, err = Open(path, "a1", "m1", false)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Details("e1"); string(got) != string(details) {
		t.Fatalf("details = %s, want %s byte for byte", got, details)
	}
	if s.Details("torn") != nil || s.Details("e3") != nil {
		t.Fatal("a torn or empty record was loaded")
	}
	if err := s.Put("e4", jsontext.Value(`[1]`)); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err = Open(path, "a1", "m1", false)
	if err != nil {
		t.Fatal(err)
	}
	if string(s.Details("e4")) != `[1]` || string(s.Details("e1")) != string(details) {
		t.Fatal("the line after the torn tail did not survive")
	}
	// Another adapter or model never gets them.
	if other, _ := Open(path, "a2", "m1", false); other.Details("e1") != nil {
		t.Fatal("details offered to another adapter")
	}
	if other, _ := Open(path, "a1", "m2", false); other.Details("e1") != nil {
		t.Fatal("details offered to another model")
	}
	fi, err := os.Stat(file)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, %v", fi.Mode(), err)
	}
}
